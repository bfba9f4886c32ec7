// A DOM Tetris whose keys are read only by an inline onkeydown on a nearly invisible
// <input> (nothing listens on document or window), behind a welcome dialog closed by
// "Got it, thanks!" and a light "PRESS ENTER TO START" cover over the whole field.
var COLS = 10;
var ROWS = 20;
var GRAVITY_MS = 600;

var boardEl = document.getElementById("board");
var coverEl = document.getElementById("cover");
var keysEl = document.getElementById("keys");
var scoreEl = document.getElementById("score");
var linesEl = document.getElementById("lines");
var statusEl = document.getElementById("status");

var SHAPES = {
  I: [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
  O: [[1, 1], [1, 1]],
  T: [[0, 1, 0], [1, 1, 1], [0, 0, 0]],
  S: [[0, 1, 1], [1, 1, 0], [0, 0, 0]],
  Z: [[1, 1, 0], [0, 1, 1], [0, 0, 0]],
  J: [[1, 0, 0], [1, 1, 1], [0, 0, 0]],
  L: [[0, 0, 1], [1, 1, 1], [0, 0, 0]]
};
var COLORS = { I: "#29d3e6", O: "#f2d43a", T: "#a45ee5", S: "#4fd16b", Z: "#ec4d4d", J: "#4d73ec", L: "#f09a3a" };
var NAMES = ["I", "O", "T", "S", "Z", "J", "L"];

var tiles = [];
var board = [];
var piece = null;
var score = 0;
var lines = 0;
var running = false;
var over = false;
var timer = null;

for (var i = 0; i < COLS * ROWS; i++) {
  var tile = document.createElement("div");
  tile.className = "tile";
  boardEl.appendChild(tile);
  tiles.push(tile);
}

function emptyBoard() {
  var b = [];
  for (var r = 0; r < ROWS; r++) {
    var row = [];
    for (var c = 0; c < COLS; c++) row.push(null);
    b.push(row);
  }
  return b;
}

function newPiece() {
  var name = NAMES[Math.floor(Math.random() * NAMES.length)];
  var m = SHAPES[name];
  return { name: name, m: m, x: Math.floor((COLS - m[0].length) / 2), y: name === "I" ? -1 : 0 };
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
    for (var c = 0; c < m[r].length; c++) {
      if (m[r][c] && piece.y + r >= 0) board[piece.y + r][piece.x + c] = COLORS[piece.name];
    }
  }
  var cleared = 0;
  for (var row = ROWS - 1; row >= 0; row--) {
    if (board[row].indexOf(null) === -1) {
      board.splice(row, 1);
      var fresh = [];
      for (var k = 0; k < COLS; k++) fresh.push(null);
      board.unshift(fresh);
      cleared++;
      row++;
    }
  }
  lines += cleared;
  score += [0, 100, 300, 500, 800][cleared];
  piece = newPiece();
  if (collides(piece.m, piece.x, piece.y)) {
    over = true;
    clearInterval(timer);
    statusEl.textContent = "GAME OVER";
  }
}

function tick() {
  if (!running || over) return;
  if (!collides(piece.m, piece.x, piece.y + 1)) piece.y++;
  else lockPiece();
  draw();
}

function draw() {
  var shown = board.map(function (row) { return row.slice(); });
  if (piece && running && !over) {
    for (var r = 0; r < piece.m.length; r++) {
      for (var c = 0; c < piece.m[r].length; c++) {
        if (piece.m[r][c] && piece.y + r >= 0) shown[piece.y + r][piece.x + c] = COLORS[piece.name];
      }
    }
  }
  for (var rr = 0; rr < ROWS; rr++) {
    for (var cc = 0; cc < COLS; cc++) {
      var t = tiles[rr * COLS + cc];
      var color = shown[rr][cc];
      t.style.background = color || "";
      t.className = color ? "tile on" : "tile";
    }
  }
  scoreEl.textContent = String(score);
  linesEl.textContent = String(lines);
}

function onKey(e) {
  if (e.key === "Enter" && !running) {
    running = true;
    coverEl.style.display = "none";
    piece = newPiece();
    timer = setInterval(tick, GRAVITY_MS);
    draw();
    return;
  }
  var keys = ["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "];
  if (keys.indexOf(e.key) === -1) return;
  e.preventDefault();
  if (!running || over) return;
  if (e.key === "ArrowLeft" && !collides(piece.m, piece.x - 1, piece.y)) piece.x--;
  if (e.key === "ArrowRight" && !collides(piece.m, piece.x + 1, piece.y)) piece.x++;
  if (e.key === "ArrowDown") {
    if (!collides(piece.m, piece.x, piece.y + 1)) {
      piece.y++;
      score += 1;
    } else {
      lockPiece();
    }
  }
  if (e.key === "ArrowUp") {
    var t = turned(piece.m);
    if (!collides(t, piece.x, piece.y)) piece.m = t;
  }
  if (e.key === " ") {
    while (!collides(piece.m, piece.x, piece.y + 1)) {
      piece.y++;
      score += 2;
    }
    lockPiece();
  }
  draw();
}

document.getElementById("close").addEventListener("click", function () {
  document.getElementById("modal").style.display = "none";
  keysEl.focus();
});
// A click on the field gives the keys back, as in the game this copies.
document.getElementById("wrap").addEventListener("mouseup", function () {
  keysEl.focus();
});

board = emptyBoard();
draw();
