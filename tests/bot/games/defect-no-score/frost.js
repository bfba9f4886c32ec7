// async/await game loop (await sleep(600) between gravity steps); board = Map of row -> Set of
// columns plus a colour lookup; only filled cells exist as SVG rects, re-created on every change.
// DEFECT: there is no score at all: nothing is counted or displayed anywhere.
const CELL = 27;
const TINTS = { I: "#00b4d8", O: "#ffd60a", T: "#7b2cbf", S: "#2d6a4f", Z: "#e63946", J: "#023e8a", L: "#f77f00" };
const FORMS = {
  I: [[0, 1], [1, 1], [2, 1], [3, 1]],
  O: [[1, 0], [2, 0], [1, 1], [2, 1]],
  T: [[1, 0], [0, 1], [1, 1], [2, 1]],
  S: [[1, 0], [2, 0], [0, 1], [1, 1]],
  Z: [[0, 0], [1, 0], [1, 1], [2, 1]],
  J: [[0, 0], [0, 1], [1, 1], [2, 1]],
  L: [[2, 0], [0, 1], [1, 1], [2, 1]],
};
const blocksG = document.getElementById("blocks");
const endText = document.getElementById("end");
const goBtn = document.getElementById("go");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let settled; // Map<row, Map<col, colour>>
let falling = null;
let session = 0;
let alive = false;

function at(x, y) {
  return settled.has(y) && settled.get(y).has(x);
}
function squares(p) {
  return p.form.map(([x, y]) => [p.x + x, p.y + y]);
}
function clear(p) {
  return squares(p).every(([x, y]) => x >= 0 && x < 10 && y < 20 && !at(x, y));
}
function drawAll() {
  const frag = document.createDocumentFragment();
  const add = (x, y, fill) => {
    if (y < 0) return;
    const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    r.setAttribute("x", x * CELL + 1);
    r.setAttribute("y", y * CELL + 1);
    r.setAttribute("width", CELL - 2);
    r.setAttribute("height", CELL - 2);
    r.setAttribute("rx", 4);
    r.setAttribute("fill", fill);
    frag.appendChild(r);
  };
  for (const [y, row] of settled) for (const [x, fill] of row) add(x, y, fill);
  if (alive && falling) for (const [x, y] of squares(falling)) add(x, y, TINTS[falling.kind]);
  blocksG.replaceChildren(frag);
}
function nextPiece() {
  const kinds = Object.keys(FORMS);
  const kind = kinds[Math.floor(Math.random() * kinds.length)];
  const form = FORMS[kind];
  falling = { kind, form, x: 3, y: -Math.min(...form.map(([, y]) => y)) };
  if (!clear(falling)) stop();
}
function stop() {
  alive = false;
  endText.setAttribute("display", "inline");
}
function fix() {
  for (const [x, y] of squares(falling)) {
    if (y < 0) return stop();
    if (!settled.has(y)) settled.set(y, new Map());
    settled.get(y).set(x, TINTS[falling.kind]);
  }
  const full = [...settled.keys()].filter((y) => settled.get(y).size === 10).sort((a, b) => a - b);
  for (const y of full) {
    const shifted = new Map();
    for (const [ry, row] of settled) {
      if (ry < y) shifted.set(ry + 1, row);
      else if (ry > y) shifted.set(ry, row);
    }
    settled = shifted;
  }
  nextPiece();
}
function attempt(dx, dy, form) {
  const p = { ...falling, x: falling.x + dx, y: falling.y + dy, form: form || falling.form };
  if (!clear(p)) return false;
  falling = p;
  return true;
}
async function run(id) {
  while (alive && id === session) {
    await sleep(600);
    if (!alive || id !== session) break;
    if (!attempt(0, 1)) fix();
    drawAll();
  }
}

goBtn.addEventListener("click", () => {
  goBtn.blur();
  settled = new Map();
  alive = true;
  session++;
  endText.setAttribute("display", "none");
  nextPiece();
  drawAll();
  run(session);
});

document.addEventListener("keydown", (e) => {
  if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " "].includes(e.key)) return;
  e.preventDefault();
  if (!alive) return;
  if (e.key === "ArrowLeft") attempt(-1, 0);
  else if (e.key === "ArrowRight") attempt(1, 0);
  else if (e.key === "ArrowUp" && falling.kind !== "O") {
    const n = falling.kind === "I" ? 4 : 3;
    attempt(0, 0, falling.form.map(([x, y]) => [n - 1 - y, x]));
  } else if (e.key === "ArrowDown") {
    if (!attempt(0, 1)) fix();
  } else if (e.key === " ") {
    while (attempt(0, 1));
    fix();
  }
  drawAll();
});

settled = new Map();
drawAll();
