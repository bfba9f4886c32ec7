// Procedural Tetris whose rotation throws when the turned piece does not fit (a wall, the
// stack): an uncaught Error on every blocked turn, the piece stays as it was, play goes on.
var COLS = 10;
var ROWS = 20;
var SIZE = 28;
var GRAVITY_MS = 600;

var canvas = document.getElementById("board");
var ctx = canvas.getContext("2d");
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
var COLORS = { I: "#00f0f0", O: "#f0f000", T: "#a000f0", S: "#00f000", Z: "#f00000", J: "#0000f0", L: "#f0a000" };
var NAMES = ["I", "O", "T", "S", "Z", "J", "L"];

var board = [];
var piece = null;
var score = 0;
var lines = 0;
var over = false;
var timer = null;

function emptyBoard() {
  var b = [];
  for (var r = 0; r < ROWS; r++) {
    var row = [];
    for (var c = 0; c < COLS; c++) row.push(null);
    b.push(row);
  }
  return b;
}

function topOffset(m) {
  for (var r = 0; r < m.length; r++) {
    for (var c = 0; c < m[r].length; c++) if (m[r][c]) return r;
  }
  return 0;
}

function newPiece() {
  var name = NAMES[Math.floor(Math.random() * NAMES.length)];
  var m = SHAPES[name];
  return { name: name, m: m, x: Math.floor((COLS - m[0].length) / 2), y: -topOffset(m) };
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

function rotate(m) {
  var n = m.length;
  var out = [];
  for (var r = 0; r < n; r++) {
    out.push([]);
    for (var c = 0; c < n; c++) out[r].push(m[n - 1 - c][r]);
  }
  return out;
}

function turnPiece() {
  var turned = rotate(piece.m);
  if (collides(turned, piece.x, piece.y)) throw new Error("Could not rotate!");
  piece.m = turned;
}

function lockPiece() {
  var m = piece.m;
  for (var r = 0; r < m.length; r++) {
    for (var c = 0; c < m[r].length; c++) {
      if (!m[r][c]) continue;
      if (piece.y + r < 0) { gameOver(); return; }
      board[piece.y + r][piece.x + c] = COLORS[piece.name];
    }
  }
  var cleared = 0;
  for (var row = ROWS - 1; row >= 0; row--) {
    var full = true;
    for (var col = 0; col < COLS; col++) if (!board[row][col]) full = false;
    if (full) {
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
  if (collides(piece.m, piece.x, piece.y)) gameOver();
}

function drop() {
  if (over) return;
  if (!collides(piece.m, piece.x, piece.y + 1)) {
    piece.y++;
  } else {
    lockPiece();
  }
  draw();
}

function cell(x, y, color) {
  ctx.fillStyle = color;
  ctx.fillRect(x * SIZE + 1, y * SIZE + 1, SIZE - 2, SIZE - 2);
}

function draw() {
  ctx.fillStyle = "#f7f3e8";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  for (var r = 0; r < ROWS; r++) {
    for (var c = 0; c < COLS; c++) if (board[r][c]) cell(c, r, board[r][c]);
  }
  if (piece && !over) {
    for (var pr = 0; pr < piece.m.length; pr++) {
      for (var pc = 0; pc < piece.m[pr].length; pc++) {
        if (piece.m[pr][pc] && piece.y + pr >= 0) cell(piece.x + pc, piece.y + pr, COLORS[piece.name]);
      }
    }
  }
  if (over) {
    ctx.fillStyle = "rgba(0,0,0,0.7)";
    ctx.fillRect(0, 250, canvas.width, 100);
    ctx.fillStyle = "#fff";
    ctx.font = "bold 36px Arial";
    ctx.textAlign = "center";
    ctx.fillText("GAME OVER", canvas.width / 2, 312);
  }
  scoreEl.textContent = String(score);
  linesEl.textContent = String(lines);
}

function gameOver() {
  over = true;
  clearInterval(timer);
  statusEl.textContent = "Game Over";
}

document.addEventListener("keydown", function (e) {
  var handled = ["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "];
  if (handled.indexOf(e.key) === -1) return;
  e.preventDefault();
  if (over) return;
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
    turnPiece();
  }
  if (e.key === " ") {
    while (!collides(piece.m, piece.x, piece.y + 1)) {
      piece.y++;
      score += 2;
    }
    lockPiece();
  }
  draw();
});

board = emptyBoard();
piece = newPiece();
timer = setInterval(drop, GRAVITY_MS);
draw();
