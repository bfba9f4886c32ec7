// Falling blocks drawn with WebGL only: every rectangle is a scissored gl.clear.
(function () {
  "use strict";

  var COLS = 10, ROWS = 20, CELL = 28;
  var W = 900, H = 700;
  var WELL_X = 300, WELL_Y = 70;          // top-left of the cell area, canvas px
  var NEXT_X = 650, NEXT_Y = 90, NEXT_CELL = 20;
  var GRAVITY_MS = 600;

  var SHAPES = {
    I: [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
    O: [[1, 1], [1, 1]],
    T: [[0, 1, 0], [1, 1, 1], [0, 0, 0]],
    S: [[0, 1, 1], [1, 1, 0], [0, 0, 0]],
    Z: [[1, 1, 0], [0, 1, 1], [0, 0, 0]],
    J: [[1, 0, 0], [1, 1, 1], [0, 0, 0]],
    L: [[0, 0, 1], [1, 1, 1], [0, 0, 0]]
  };
  var KINDS = ["I", "O", "T", "S", "Z", "J", "L"];
  var COLOURS = {                          // 0..1 rgb
    I: [0.0, 0.94, 0.94], O: [0.98, 0.9, 0.0], T: [0.75, 0.2, 1.0], S: [0.1, 0.95, 0.25],
    Z: [1.0, 0.18, 0.18], J: [0.2, 0.45, 1.0], L: [1.0, 0.6, 0.0]
  };
  var BG = [16 / 255, 16 / 255, 16 / 255];
  var GREY = [128 / 255, 128 / 255, 128 / 255];

  var canvas = document.getElementById("feld");
  var scoreEl = document.getElementById("punkte");
  var statusEl = document.getElementById("status");
  var button = document.getElementById("spielen");
  var gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: false });

  var board, piece, nextKind, score, running = false, over = false, lastFall = 0;

  function emptyBoard() {
    var b = [];
    for (var r = 0; r < ROWS; r++) { var row = []; for (var c = 0; c < COLS; c++) row.push(null); b.push(row); }
    return b;
  }
  board = emptyBoard();

  function randomKind() { return KINDS[Math.floor(Math.random() * KINDS.length)]; }

  function cellsOf(p) {
    var out = [];
    for (var r = 0; r < p.m.length; r++) for (var c = 0; c < p.m[r].length; c++)
      if (p.m[r][c]) out.push([p.row + r, p.col + c]);
    return out;
  }

  function fits(p) {
    var cells = cellsOf(p);
    for (var i = 0; i < cells.length; i++) {
      var r = cells[i][0], c = cells[i][1];
      if (c < 0 || c >= COLS || r >= ROWS) return false;
      if (r >= 0 && board[r][c]) return false;
    }
    return true;
  }

  function firstFilledRow(m) {
    for (var r = 0; r < m.length; r++) for (var c = 0; c < m[r].length; c++) if (m[r][c]) return r;
    return 0;
  }

  function spawn() {
    var kind = nextKind;
    nextKind = randomKind();
    var m = SHAPES[kind];
    var p = { kind: kind, m: m, row: -firstFilledRow(m), col: Math.floor((COLS - m[0].length) / 2) };
    if (!fits(p)) { endGame(); return; }
    piece = p;
  }

  function endGame() {
    piece = null; running = false; over = true;
    statusEl.textContent = "Spiel vorbei";
  }

  function updateScore() { scoreEl.textContent = "Punkte: " + score; }

  function lock() {
    var cells = cellsOf(piece);
    for (var i = 0; i < cells.length; i++) if (cells[i][0] >= 0) board[cells[i][0]][cells[i][1]] = piece.kind;
    var kept = [];
    for (var r = 0; r < ROWS; r++) {
      var full = true;
      for (var c = 0; c < COLS; c++) if (!board[r][c]) { full = false; break; }
      if (!full) kept.push(board[r]);
    }
    var cleared = ROWS - kept.length;
    while (kept.length < ROWS) { var row = []; for (var k = 0; k < COLS; k++) row.push(null); kept.unshift(row); }
    board = kept;
    if (cleared) { score += 100 * cleared; updateScore(); }
    piece = null;
    spawn();
  }

  function tryMove(dr, dc) {
    var p = { kind: piece.kind, m: piece.m, row: piece.row + dr, col: piece.col + dc };
    if (!fits(p)) return false;
    piece = p;
    return true;
  }

  function rotated(m) {                   // clockwise
    var n = m.length, out = [];
    for (var r = 0; r < n; r++) { out.push([]); for (var c = 0; c < n; c++) out[r].push(m[n - 1 - c][r]); }
    return out;
  }

  function rotate() {
    var m = rotated(piece.m), kicks = [0, -1, 1, -2, 2];
    for (var i = 0; i < kicks.length; i++) {
      var p = { kind: piece.kind, m: m, row: piece.row, col: piece.col + kicks[i] };
      if (fits(p)) { piece = p; return; }
    }
  }

  function softDrop() {
    if (tryMove(1, 0)) { score += 1; updateScore(); } else lock();
    lastFall = performance.now();
  }

  function hardDrop() {
    var n = 0;
    while (tryMove(1, 0)) n++;
    score += 2 * n; updateScore();
    lock();
    lastFall = performance.now();
  }

  function start() {
    board = emptyBoard(); score = 0; over = false; running = true;
    statusEl.textContent = ""; updateScore();
    nextKind = randomKind();
    spawn();
    lastFall = performance.now();
  }

  // ---- drawing: scissored clears, y measured from the canvas bottom ----
  function rect(x, y, w, h, rgb) {
    gl.scissor(x, H - y - h, w, h);
    gl.clearColor(rgb[0], rgb[1], rgb[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
  }

  function draw() {
    gl.disable(gl.SCISSOR_TEST);
    gl.viewport(0, 0, W, H);
    gl.clearColor(BG[0], BG[1], BG[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.SCISSOR_TEST);
    // well outline: left, right and bottom, 2 px just outside the cells; no top line
    rect(WELL_X - 2, WELL_Y, 2, ROWS * CELL + 2, GREY);
    rect(WELL_X + COLS * CELL, WELL_Y, 2, ROWS * CELL + 2, GREY);
    rect(WELL_X - 2, WELL_Y + ROWS * CELL, COLS * CELL + 4, 2, GREY);
    var r, c;
    for (r = 0; r < ROWS; r++) for (c = 0; c < COLS; c++)
      if (board[r][c]) rect(WELL_X + c * CELL + 1, WELL_Y + r * CELL + 1, CELL - 2, CELL - 2, COLOURS[board[r][c]]);
    if (piece) {
      var cells = cellsOf(piece);
      for (var i = 0; i < cells.length; i++) if (cells[i][0] >= 0)
        rect(WELL_X + cells[i][1] * CELL + 1, WELL_Y + cells[i][0] * CELL + 1, CELL - 2, CELL - 2, COLOURS[piece.kind]);
    }
    if (nextKind && running) {
      var m = SHAPES[nextKind], top = firstFilledRow(m);
      for (r = 0; r < m.length; r++) for (c = 0; c < m[r].length; c++) if (m[r][c])
        rect(NEXT_X + c * NEXT_CELL + 1, NEXT_Y + (r - top) * NEXT_CELL + 1, NEXT_CELL - 2, NEXT_CELL - 2, COLOURS[nextKind]);
    }
  }

  function frame(now) {
    if (running && piece && now - lastFall >= GRAVITY_MS) {
      lastFall = now;
      if (!tryMove(1, 0)) lock();
    }
    draw();
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);

  button.addEventListener("click", function () { button.blur(); start(); });

  document.addEventListener("keydown", function (e) {
    var acts = { ArrowLeft: 1, ArrowRight: 1, ArrowDown: 1, ArrowUp: 1, " ": 1 };
    if (!acts[e.key]) return;
    e.preventDefault();
    if (!running || !piece) return;
    if (e.key === "ArrowLeft") tryMove(0, -1);
    else if (e.key === "ArrowRight") tryMove(0, 1);
    else if (e.key === "ArrowDown") softDrop();
    else if (e.key === "ArrowUp") rotate();
    else hardDrop();
  });
})();
