// Flat 1D board of 200 single-character codes; rows of flex <span>s coloured inline.
// DEFECT: rotate() computes the turned shape but never applies it, so nothing ever rotates.
const WIDTH = 10;
const HEIGHT = 20;
const TINT = { I: "#00b4d8", O: "#ffb703", T: "#7209b7", S: "#2a9d8f", Z: "#d62828", J: "#3a0ca3", L: "#fb8500" };
const FORMS = {
  I: [[0, 0], [1, 0], [2, 0], [3, 0]],
  O: [[0, 0], [1, 0], [0, 1], [1, 1]],
  T: [[0, 0], [1, 0], [2, 0], [1, 1]],
  S: [[1, 0], [2, 0], [0, 1], [1, 1]],
  Z: [[0, 0], [1, 0], [1, 1], [2, 1]],
  J: [[0, 0], [0, 1], [1, 1], [2, 1]],
  L: [[2, 0], [0, 1], [1, 1], [2, 1]],
};

const rowsEl = document.getElementById("rows");
const spans = [];
for (let y = 0; y < HEIGHT; y++) {
  const row = document.createElement("div");
  row.className = "r";
  for (let x = 0; x < WIDTH; x++) {
    const s = document.createElement("span");
    row.appendChild(s);
    spans.push(s);
  }
  rowsEl.appendChild(row);
}
const scoreEl = document.getElementById("score");
const noteEl = document.getElementById("note");
const startBtn = document.getElementById("start");

let cells = new Array(WIDTH * HEIGHT).fill("");
let piece = null;
let score = 0;
let running = false;
let gravity = null;

function spawnPiece() {
  const names = Object.keys(FORMS);
  const name = names[Math.floor(Math.random() * names.length)];
  piece = { name, blocks: FORMS[name].map((b) => b.slice()), x: 3, y: 0 };
  if (!fits(piece.blocks, piece.x, piece.y)) endGame();
}

function fits(blocks, x, y) {
  return blocks.every(([bx, by]) => {
    const cx = x + bx;
    const cy = y + by;
    return cx >= 0 && cx < WIDTH && cy >= 0 && cy < HEIGHT && cells[cy * WIDTH + cx] === "";
  });
}

function move(dx, dy) {
  if (!fits(piece.blocks, piece.x + dx, piece.y + dy)) return false;
  piece.x += dx;
  piece.y += dy;
  return true;
}

function rotate() {
  const size = Math.max(...piece.blocks.flat()) + 1;
  const turned = piece.blocks.map(([bx, by]) => [size - 1 - by, bx]);
  if (fits(turned, piece.x, piece.y)) {
    piece.turns = ((piece.turns || 0) + 1) % 4; // BUG: piece.blocks = turned is missing
  }
}

function lockDown() {
  for (const [bx, by] of piece.blocks) cells[(piece.y + by) * WIDTH + piece.x + bx] = piece.name;
  let lines = 0;
  for (let y = HEIGHT - 1; y >= 0; y--) {
    const row = cells.slice(y * WIDTH, (y + 1) * WIDTH);
    if (row.every((c) => c !== "")) {
      cells = new Array(WIDTH).fill("").concat(cells.slice(0, y * WIDTH), cells.slice((y + 1) * WIDTH));
      lines++;
      y++;
    }
  }
  score += [0, 100, 300, 500, 800][lines];
  spawnPiece();
}

function endGame() {
  running = false;
  clearInterval(gravity);
  noteEl.textContent = "Game Over";
  startBtn.textContent = "Start";
}

function paint() {
  const view = cells.slice();
  if (running) for (const [bx, by] of piece.blocks) view[(piece.y + by) * WIDTH + piece.x + bx] = piece.name;
  view.forEach((c, i) => {
    spans[i].style.background = c ? TINT[c] : "";
  });
  scoreEl.textContent = score;
}

function start() {
  cells = new Array(WIDTH * HEIGHT).fill("");
  score = 0;
  running = true;
  noteEl.textContent = "";
  spawnPiece();
  clearInterval(gravity);
  gravity = setInterval(() => {
    if (!running) return;
    if (!move(0, 1)) lockDown();
    paint();
  }, 700);
  paint();
}

startBtn.addEventListener("click", () => {
  startBtn.blur();
  start();
});

document.addEventListener("keydown", (e) => {
  const map = { ArrowLeft: 1, ArrowRight: 1, ArrowDown: 1, ArrowUp: 1, " ": 1 };
  if (!map[e.key]) return;
  e.preventDefault();
  if (!running) return;
  if (e.key === "ArrowLeft") move(-1, 0);
  else if (e.key === "ArrowRight") move(1, 0);
  else if (e.key === "ArrowUp") rotate();
  else if (e.key === "ArrowDown") {
    if (move(0, 1)) score += 1;
    else lockDown();
  } else {
    while (move(0, 1)) score += 2;
    lockDown();
  }
  paint();
});

paint();
