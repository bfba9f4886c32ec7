// Board = 2D array of piece letters, cells are <div data-k="..."> coloured by CSS attribute
// selectors; a 100 ms setInterval compares against a nextFall timestamp (500 ms gravity).
// DEFECT: when a new piece cannot spawn, the board is silently wiped and play continues
// (no game-over state, pieces keep coming).
const SPEC = "I:0,1 1,1 2,1 3,1|O:1,0 2,0 1,1 2,1|T:1,0 0,1 1,1 2,1|S:1,0 2,0 0,1 1,1|" +
  "Z:0,0 1,0 1,1 2,1|J:0,0 0,1 1,1 2,1|L:2,0 0,1 1,1 2,1";
const KINDS = Object.fromEntries(
  SPEC.split("|").map((entry) => {
    const [name, coords] = entry.split(":");
    return [name, coords.split(" ").map((xy) => xy.split(",").map(Number))];
  })
);
const FALL_MS = 500;
const matrixEl = document.getElementById("matrix");
const scoreEl = document.getElementById("score");
const beginBtn = document.getElementById("begin");
const tiles = [];
for (let i = 0; i < 200; i++) tiles.push(matrixEl.appendChild(document.createElement("div")));

const game = { grid: [], cur: null, score: 0, on: false, nextFall: 0 };

function wipe() {
  game.grid = Array.from({ length: 20 }, () => Array(10).fill(""));
}
function cellsOf(p) {
  return p.shape.map(([x, y]) => [p.x + x, p.y + y]);
}
function legal(p) {
  return cellsOf(p).every(([x, y]) => x >= 0 && x < 10 && y >= 0 && y < 20 && !game.grid[y][x]);
}
function deal() {
  const names = Object.keys(KINDS);
  const kind = names[Math.floor(Math.random() * names.length)];
  const shape = KINDS[kind];
  const top = Math.min(...shape.map(([, y]) => y));
  game.cur = { kind, shape, x: 3, y: -top, box: kind === "I" || kind === "O" ? 4 : 3 };
  if (!legal(game.cur)) {
    wipe(); // BUG: should end the game here
  }
}
function tryTo(change) {
  const p = { ...game.cur, ...change };
  if (!legal(p)) return false;
  game.cur = p;
  return true;
}
function rotate() {
  const p = game.cur;
  if (p.kind === "O") return;
  const shape = p.shape.map(([x, y]) => [p.box - 1 - y, x]);
  tryTo({ shape }) || tryTo({ shape, x: p.x - 1 }) || tryTo({ shape, x: p.x + 1 }) || tryTo({ shape, y: p.y + 1 });
}
function settle() {
  for (const [x, y] of cellsOf(game.cur)) game.grid[y][x] = game.cur.kind;
  const remaining = game.grid.filter((row) => row.some((v) => !v));
  const cleared = 20 - remaining.length;
  game.grid = Array.from({ length: cleared }, () => Array(10).fill("")).concat(remaining);
  game.score += [0, 100, 300, 500, 800][cleared];
  deal();
  game.nextFall = performance.now() + FALL_MS;
}
function render() {
  const shown = game.grid.map((row) => row.slice());
  if (game.on) for (const [x, y] of cellsOf(game.cur)) shown[y][x] = game.cur.kind;
  shown.flat().forEach((k, i) => {
    if (k) tiles[i].dataset.k = k;
    else delete tiles[i].dataset.k;
  });
  scoreEl.textContent = game.score;
}
setInterval(() => {
  if (!game.on || performance.now() < game.nextFall) return;
  game.nextFall += FALL_MS;
  if (!tryTo({ y: game.cur.y + 1 })) settle();
  render();
}, 100);

beginBtn.addEventListener("click", () => {
  beginBtn.blur();
  wipe();
  game.score = 0;
  game.on = true;
  deal();
  game.nextFall = performance.now() + FALL_MS;
  render();
});

document.addEventListener("keydown", (e) => {
  const keys = { ArrowLeft: 1, ArrowRight: 1, ArrowUp: 1, ArrowDown: 1, " ": 1 };
  if (!keys[e.key]) return;
  e.preventDefault();
  if (!game.on) return;
  const c = game.cur;
  if (e.key === "ArrowLeft") tryTo({ x: c.x - 1 });
  else if (e.key === "ArrowRight") tryTo({ x: c.x + 1 });
  else if (e.key === "ArrowUp") rotate();
  else if (e.key === "ArrowDown") {
    if (tryTo({ y: c.y + 1 })) game.score += 1;
    else settle();
  } else {
    while (tryTo({ y: game.cur.y + 1 })) game.score += 2;
    settle();
  }
  render();
});

wipe();
render();
