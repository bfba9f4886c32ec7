// A small falling-block engine: state and rules only; the page draws it and binds keys.
"use strict";
const SHAPES = {
  I: [[0, 0], [0, 1], [0, 2], [0, 3]],
  O: [[0, 0], [0, 1], [1, 0], [1, 1]],
  T: [[0, 1], [1, 0], [1, 1], [1, 2]],
  S: [[0, 1], [0, 2], [1, 0], [1, 1]],
  Z: [[0, 0], [0, 1], [1, 1], [1, 2]],
  J: [[0, 0], [1, 0], [1, 1], [1, 2]],
  L: [[0, 2], [1, 0], [1, 1], [1, 2]],
};
const KINDS = Object.keys(SHAPES);
let serial = 0;

function turn(cells, dir) {
  // Rotate about the centre of the cells' box, then move back to the box's top-left.
  const size = Math.max(...cells.map(([r, c]) => Math.max(r, c))) + 1;
  const out = cells.map(([r, c]) => (dir > 0 ? [c, size - 1 - r] : [size - 1 - c, r]));
  const r0 = Math.min(...out.map((p) => p[0]));
  const c0 = Math.min(...out.map((p) => p[1]));
  return out.map(([r, c]) => [r - r0, c - c0]);
}

function createGame(cfg) {
  const g = {
    cols: cfg.cols, rows: cfg.rows, grid: [], piece: null, score: 0, lines: 0,
    running: false, over: false,
  };
  const empty = () => Array.from({ length: g.rows }, () => Array(g.cols).fill(null));
  const cellsOf = (p) => p.cells.map(([r, c]) => [p.row + r, p.col + c]);
  const fits = (p) => cellsOf(p).every(([r, c]) =>
    c >= 0 && c < g.cols && r < g.rows && (r < 0 || !g.grid[r][c]));
  g.cellsOf = cellsOf;
  const spawn = () => {
    const kind = KINDS[Math.floor(Math.random() * KINDS.length)];
    const cells = SHAPES[kind];
    const width = Math.max(...cells.map((p) => p[1])) + 1;
    const p = { id: ++serial, kind, cells, row: cfg.spawnRow, col: Math.floor((g.cols - width) / 2) };
    if (!fits(p) || cellsOf({ ...p, row: 0 }).some(([r, c]) => r >= 0 && g.grid[r][c])) {
      g.piece = null; g.running = false; g.over = true;
      cfg.changed(g, "over");
      return;
    }
    g.piece = p;
  };
  const lock = () => {
    for (const [r, c] of cellsOf(g.piece)) if (r >= 0) g.grid[r][c] = g.piece.kind;
    const kept = g.grid.filter((row) => row.some((v) => !v));
    const n = g.rows - kept.length;
    g.grid = [...Array.from({ length: n }, () => Array(g.cols).fill(null)), ...kept];
    g.lines += n;
    g.score += [0, 100, 300, 500, 800][n];
    g.piece = null;
    spawn();
  };
  const move = (dr, dc) => {
    if (!g.piece) return false;
    const next = { ...g.piece, row: g.piece.row + dr, col: g.piece.col + dc };
    if (!fits(next)) return false;
    g.piece = next;
    return true;
  };
  g.start = () => {
    g.grid = empty(); g.score = 0; g.lines = 0; g.over = false; g.running = true;
    spawn();
    cfg.changed(g, "start");
  };
  g.tick = () => {
    if (!g.running || !g.piece) return;
    if (!move(1, 0)) lock();
    cfg.changed(g, "tick");
  };
  g.left = () => g.running && move(0, -1) && cfg.changed(g, "move");
  g.right = () => g.running && move(0, 1) && cfg.changed(g, "move");
  g.soft = () => {
    if (!g.running || !g.piece) return;
    if (move(1, 0)) g.score += 1; else lock();
    cfg.changed(g, "soft");
  };
  g.landingRow = () => {
    let p = g.piece;
    while (fits({ ...p, row: p.row + 1 })) p = { ...p, row: p.row + 1 };
    return p.row;
  };
  g.sink = () => {
    // To the landing row without locking (a lock may follow later).
    if (!g.running || !g.piece) return;
    const to = g.landingRow();
    g.score += 2 * (to - g.piece.row);
    g.piece = { ...g.piece, row: to };
    cfg.changed(g, "sink");
  };
  g.hard = () => {
    if (!g.running || !g.piece) return;
    g.sink();
    lock();
    cfg.changed(g, "hard");
  };
  g.lockNow = () => { if (g.running && g.piece && !fits({ ...g.piece, row: g.piece.row + 1 })) { lock(); cfg.changed(g, "lock"); } };
  g.rotate = (dir) => {
    if (!g.running || !g.piece) return;
    const cells = turn(g.piece.cells, dir);
    for (const kick of [0, -1, 1, -2, 2]) {
      const next = { ...g.piece, cells, col: g.piece.col + kick };
      if (fits(next)) { g.piece = next; cfg.changed(g, "rotate"); return; }
    }
  };
  g.view = () => {
    // The grid with the falling piece in it (cells above the field are not shown).
    const v = g.grid.map((row) => row.slice());
    if (g.piece) for (const [r, c] of cellsOf(g.piece)) if (r >= 0) v[r][c] = g.piece.kind;
    return v;
  };
  g.grid = empty();
  return g;
}

// ---- page: a <table> board; the set-up has a bug that fires on two loads out of three ----
const COLOURS = { I: "#00a5b5", O: "#e4b400", T: "#9b3fb5", S: "#3c9d3c", Z: "#d23a3a", J: "#2f5fb3", L: "#e07b1f" };
const tablero = document.getElementById("tablero");
const celdas = [];
for (let r = 0; r < 20; r++) {
  const tr = tablero.insertRow();
  for (let c = 0; c < 10; c++) celdas.push(tr.insertCell());
}
const cargas = Number(localStorage.getItem("bloques-cargas") || 0) + 1;
localStorage.setItem("bloques-cargas", String(cargas));
// The saved settings exist only from the third load on: before that, reading them throws.
const ajustes = cargas % 3 === 0 ? { velocidad: { ms: 600 } } : {};
const velocidad = ajustes.velocidad.ms;

const puntos = document.getElementById("puntos");
const fin = document.getElementById("fin");
const game = createGame({
  cols: 10, rows: 20, spawnRow: 0,
  changed(g, why) {
    const v = g.view();
    for (let r = 0; r < 20; r++) for (let c = 0; c < 10; c++) {
      celdas[r * 10 + c].style.backgroundColor = v[r][c] ? COLOURS[v[r][c]] : "";
    }
    puntos.textContent = String(g.score);
    fin.textContent = why === "over" ? "Juego terminado" : g.over ? fin.textContent : "";
  },
});
setInterval(() => game.tick(), velocidad);
document.getElementById("jugar").addEventListener("click", (e) => { e.target.blur(); game.start(); });
document.addEventListener("keydown", (e) => {
  const act = { ArrowLeft: game.left, ArrowRight: game.right, ArrowDown: game.soft,
                ArrowUp: () => game.rotate(1), " ": game.hard }[e.key];
  if (act) { e.preventDefault(); act(); }
});
