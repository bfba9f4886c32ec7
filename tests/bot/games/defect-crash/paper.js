// Input-queue architecture: keydown only enqueues; the requestAnimationFrame loop drains the queue,
// advances the level clock, applies gravity and draws. Board = array of row arrays of ints.
// DEFECT: the level table has a single entry; 8 s after the player's first key press the level-up
// code reads LEVELS[1].speed -> uncaught TypeError inside the frame, so the loop (and input) dies.
"use strict";
const COLS = 10, ROWS = 20, SZ = 22;
const INK = [null, "#e63946", "#1d3557", "#2a9d8f", "#f4a261", "#6a4c93", "#457b9d", "#e9c46a"];
const BLOCKS = [
  null,
  [[0, 1], [1, 1], [2, 1], [3, 1]],
  [[1, 0], [2, 0], [1, 1], [2, 1]],
  [[1, 0], [0, 1], [1, 1], [2, 1]],
  [[1, 0], [2, 0], [0, 1], [1, 1]],
  [[0, 0], [1, 0], [1, 1], [2, 1]],
  [[0, 0], [0, 1], [1, 1], [2, 1]],
  [[2, 0], [0, 1], [1, 1], [2, 1]],
];
const BOX = [0, 4, 4, 3, 3, 3, 3, 3];
const LEVELS = [{ speed: 600 }];

const ctx = document.getElementById("paper").getContext("2d");
const scoreEl = document.getElementById("score");
const levelEl = document.getElementById("level");
const msgEl = document.getElementById("msg");

const board = Array.from({ length: ROWS }, () => new Array(COLS).fill(0));
const queue = [];
let cur = null;
let score = 0;
let level = 0;
let dropMs = LEVELS[0].speed;
let sinceDrop = 0;
let playClock = 0;
let clockOn = false;
let over = false;
let last = performance.now();

function newCur() {
  const id = 1 + Math.floor(Math.random() * 7);
  const cells = BLOCKS[id].map((c) => c.slice());
  cur = { id, cells, x: 3, y: -Math.min(...cells.map((c) => c[1])) };
  if (!free(cur.cells, cur.x, cur.y)) {
    over = true;
    msgEl.textContent = "Game Over";
  }
}
function free(cells, x, y) {
  return cells.every(([cx, cy]) => {
    const bx = x + cx, by = y + cy;
    return bx >= 0 && bx < COLS && by < ROWS && (by < 0 || board[by][bx] === 0);
  });
}
function nudge(dx, dy) {
  if (!free(cur.cells, cur.x + dx, cur.y + dy)) return false;
  cur.x += dx;
  cur.y += dy;
  return true;
}
function spin() {
  const n = BOX[cur.id];
  const cells = cur.cells.map(([cx, cy]) => (cur.id === 2 ? [cx, cy] : [n - 1 - cy, cx]));
  if (free(cells, cur.x, cur.y)) cur.cells = cells;
}
function stamp() {
  for (const [cx, cy] of cur.cells) {
    if (cur.y + cy < 0) {
      over = true;
      msgEl.textContent = "Game Over";
      return;
    }
    board[cur.y + cy][cur.x + cx] = cur.id;
  }
  let n = 0;
  for (let y = ROWS - 1; y >= 0; y--) {
    if (board[y].every((v) => v)) {
      board.splice(y, 1);
      board.unshift(new Array(COLS).fill(0));
      n++;
      y++;
    }
  }
  score += [0, 100, 300, 500, 800][n] * (level + 1);
  newCur();
}
function handle(key) {
  if (key === "ArrowLeft") nudge(-1, 0);
  else if (key === "ArrowRight") nudge(1, 0);
  else if (key === "ArrowUp") spin();
  else if (key === "ArrowDown") {
    if (nudge(0, 1)) score += 1;
    else stamp();
    sinceDrop = 0;
  } else if (key === " ") {
    while (nudge(0, 1)) score += 2;
    stamp();
  }
}
function levelClock(dt) {
  if (!clockOn) return;
  playClock += dt;
  if (playClock >= 8000 * (level + 1)) {
    level++;
    dropMs = LEVELS[level].speed; // TypeError: LEVELS[1] is undefined
    levelEl.textContent = level + 1;
  }
}
function draw() {
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, COLS * SZ, ROWS * SZ);
  const sq = (x, y, id) => {
    ctx.fillStyle = INK[id];
    ctx.fillRect(x * SZ, y * SZ, SZ, SZ);
    ctx.strokeStyle = "#222";
    ctx.lineWidth = 2;
    ctx.strokeRect(x * SZ + 1, y * SZ + 1, SZ - 2, SZ - 2);
  };
  board.forEach((row, y) => row.forEach((v, x) => v && sq(x, y, v)));
  if (!over) for (const [cx, cy] of cur.cells) if (cur.y + cy >= 0) sq(cur.x + cx, cur.y + cy, cur.id);
  if (over) {
    ctx.fillStyle = "#222";
    ctx.fillRect(0, 190, COLS * SZ, 60);
    ctx.fillStyle = "#fff";
    ctx.font = "bold 28px 'Times New Roman', serif";
    ctx.textAlign = "center";
    ctx.fillText("GAME OVER", (COLS * SZ) / 2, 230);
  }
  scoreEl.textContent = score;
}
function frame(now) {
  const dt = Math.min(100, now - last);
  last = now;
  levelClock(dt);
  if (!over) {
    while (queue.length && !over) handle(queue.shift());
    sinceDrop += dt;
    if (!over && sinceDrop >= dropMs) {
      sinceDrop = 0;
      if (!nudge(0, 1)) stamp();
    }
  }
  draw();
  requestAnimationFrame(frame);
}

document.addEventListener("keydown", (e) => {
  if (!["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "].includes(e.key)) return;
  e.preventDefault();
  clockOn = true;
  if (queue.length < 8) queue.push(e.key);
});

newCur();
requestAnimationFrame(frame);
