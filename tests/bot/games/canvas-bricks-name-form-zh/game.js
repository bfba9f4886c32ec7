// A brick game (Chinese handheld style): one colour, cells wider than tall (50x37 px
// steps on a 500x740 canvas), a name asked on the page before, a start button, and no
// <meta charset> in either page. Pieces are black, empty cells olive outlines.
var COLS = 10;
var ROWS = 20;
var STEP_X = 50;
var STEP_Y = 37;
var GRAVITY_MS = 550;

var canvas = document.getElementById("board");
var ctx = canvas.getContext("2d");
var scoreEl = document.getElementById("score");
var statusEl = document.getElementById("status");
document.getElementById("player").textContent =
  new URLSearchParams(location.search).get("player") || "?";

var SHAPES = [
  [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
  [[1, 1], [1, 1]],
  [[0, 1, 0], [1, 1, 1], [0, 0, 0]],
  [[0, 1, 1], [1, 1, 0], [0, 0, 0]],
  [[1, 1, 0], [0, 1, 1], [0, 0, 0]],
  [[1, 0, 0], [1, 1, 1], [0, 0, 0]],
  [[0, 0, 1], [1, 1, 1], [0, 0, 0]]
];

var board = [];
var piece = null;
var score = 0;
var running = false;
var over = false;
var timer = null;

function emptyBoard() {
  var b = [];
  for (var r = 0; r < ROWS; r++) {
    var row = [];
    for (var c = 0; c < COLS; c++) row.push(0);
    b.push(row);
  }
  return b;
}

function newPiece() {
  var m = SHAPES[Math.floor(Math.random() * SHAPES.length)];
  return { m: m, x: Math.floor((COLS - m[0].length) / 2), y: 0 };
}

function collides(m, x, y) {
  for (var r = 0; r < m.length; r++) {
    for (var c = 0; c < m[r].length; c++) {
      if (!m[r][c]) continue;
      var nx = x + c;
      var ny = y + r;
      if (nx < 0 || nx >= COLS || ny >= ROWS) return true;
      if (ny >= 0 && board[ny][nx]) return true;
    }
  }
  return false;
}

function turned(m) {
  var n = m.length;
  var out = [];
  for (var r = 0; r < n; r++) {
    out.push([]);
    for (var c = 0; c < n; c++) out[r].push(m[n - 1 - c][r]);
  }
  return out;
}

function lockPiece() {
  var m = piece.m;
  for (var r = 0; r < m.length; r++) {
    for (var c = 0; c < m[r].length; c++) if (m[r][c]) board[piece.y + r][piece.x + c] = 1;
  }
  var cleared = 0;
  for (var row = ROWS - 1; row >= 0; row--) {
    if (board[row].indexOf(0) === -1) {
      board.splice(row, 1);
      var fresh = [];
      for (var k = 0; k < COLS; k++) fresh.push(0);
      board.unshift(fresh);
      cleared++;
      row++;
    }
  }
  score += cleared * 10;
  piece = newPiece();
  if (collides(piece.m, piece.x, piece.y)) {
    over = true;
    clearInterval(timer);
    statusEl.textContent = "游戏结束";
  }
}

function tick() {
  if (!running || over) return;
  if (!collides(piece.m, piece.x, piece.y + 1)) piece.y++;
  else lockPiece();
  draw();
}

function cell(c, r, full) {
  var x = c * STEP_X + 3;
  var y = r * STEP_Y + 3;
  if (full) {
    ctx.fillStyle = "#111";
    ctx.fillRect(x, y, STEP_X - 6, STEP_Y - 6);
  } else {
    ctx.strokeStyle = "#a9b48a";
    ctx.lineWidth = 3;
    ctx.strokeRect(x + 2, y + 2, STEP_X - 10, STEP_Y - 10);
  }
}

function draw() {
  ctx.fillStyle = "#86906a";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  var shown = board.map(function (row) { return row.slice(); });
  if (piece && running && !over) {
    for (var r = 0; r < piece.m.length; r++) {
      for (var c = 0; c < piece.m[r].length; c++) if (piece.m[r][c]) shown[piece.y + r][piece.x + c] = 1;
    }
  }
  for (var rr = 0; rr < ROWS; rr++) {
    for (var cc = 0; cc < COLS; cc++) cell(cc, rr, shown[rr][cc]);
  }
  scoreEl.textContent = String(score);
}

document.getElementById("start").addEventListener("click", function (e) {
  e.target.blur();
  if (running) return;
  running = true;
  piece = newPiece();
  timer = setInterval(tick, GRAVITY_MS);
  draw();
});

document.addEventListener("keydown", function (e) {
  var keys = ["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "];
  if (keys.indexOf(e.key) === -1) return;
  e.preventDefault();
  if (!running || over) return;
  if (e.key === "ArrowLeft" && !collides(piece.m, piece.x - 1, piece.y)) piece.x--;
  if (e.key === "ArrowRight" && !collides(piece.m, piece.x + 1, piece.y)) piece.x++;
  if (e.key === "ArrowDown") {
    if (!collides(piece.m, piece.x, piece.y + 1)) piece.y++;
    else lockPiece();
  }
  if (e.key === "ArrowUp") {
    var t = turned(piece.m);
    if (!collides(t, piece.x, piece.y)) piece.m = t;
  }
  if (e.key === " ") {
    while (!collides(piece.m, piece.x, piece.y + 1)) piece.y++;
    lockPiece();
  }
  draw();
});

board = emptyBoard();
draw();
