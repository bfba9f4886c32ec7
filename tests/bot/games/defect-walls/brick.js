// Tetromino / Playfield constructors; the well sits between two brick walls drawn on the same
// canvas. Gravity is a setInterval (550 ms); drawing is a separate requestAnimationFrame loop.
// DEFECT: horizontal movement is never clamped to the well: blocked() has no column bounds check,
// so a piece can slide into (and through) the brick walls; cells outside the well are lost on lock.
function Tetromino(kind) {
  var defs = {
    I: ["#4dabf7", [[0, 0], [1, 0], [2, 0], [3, 0]], 4],
    O: ["#ffd43b", [[0, 0], [1, 0], [0, 1], [1, 1]], 2],
    T: ["#cc5de8", [[1, 0], [0, 1], [1, 1], [2, 1]], 3],
    S: ["#69db7c", [[1, 0], [2, 0], [0, 1], [1, 1]], 3],
    Z: ["#ff6b6b", [[0, 0], [1, 0], [1, 1], [2, 1]], 3],
    J: ["#748ffc", [[0, 0], [0, 1], [1, 1], [2, 1]], 3],
    L: ["#ffa94d", [[2, 0], [0, 1], [1, 1], [2, 1]], 3]
  };
  this.color = defs[kind][0];
  this.parts = defs[kind][1].map(function (p) { return p.slice(); });
  this.size = defs[kind][2];
  this.x = 3;
  this.y = 0;
}
Tetromino.prototype.turned = function () {
  var n = this.size;
  if (n === 2) return this.parts;
  return this.parts.map(function (p) { return [n - 1 - p[1], p[0]]; });
};

function Playfield() {
  this.cols = 10;
  this.rows = 20;
  this.cells = [];
  for (var y = 0; y < this.rows; y++) this.cells.push(new Array(this.cols).fill(null));
}
Playfield.prototype.blocked = function (parts, px, py) {
  for (var i = 0; i < parts.length; i++) {
    var x = px + parts[i][0], y = py + parts[i][1];
    if (y >= this.rows) return true;
    if (this.cells[y] && this.cells[y][x]) return true; // BUG: no x < 0 / x >= cols check
  }
  return false;
};
Playfield.prototype.absorb = function (t) {
  var self = this;
  t.parts.forEach(function (p) {
    var x = t.x + p[0], y = t.y + p[1];
    if (x >= 0 && x < self.cols && y >= 0) self.cells[y][x] = t.color;
  });
  var kept = this.cells.filter(function (row) { return row.some(function (c) { return !c; }); });
  var n = this.rows - kept.length;
  while (kept.length < this.rows) kept.unshift(new Array(this.cols).fill(null));
  this.cells = kept;
  return n;
};

var canvas = document.getElementById("brick");
var ctx = canvas.getContext("2d");
var CELL = 25, LEFT = 75;
var field = new Playfield();
var piece = null, score = 0, over = false;
var scoreEl = document.getElementById("score");
var overEl = document.getElementById("over");

function spawn() {
  piece = new Tetromino("IOTSZJL".charAt(Math.floor(Math.random() * 7)));
  if (field.blocked(piece.parts, piece.x, piece.y)) {
    over = true;
    overEl.textContent = "Game Over";
    clearInterval(gravity);
  }
}
function go(dx, dy) {
  if (field.blocked(piece.parts, piece.x + dx, piece.y + dy)) return false;
  piece.x += dx;
  piece.y += dy;
  return true;
}
function lock() {
  score += [0, 100, 300, 500, 800][field.absorb(piece)];
  spawn();
}
var gravity = setInterval(function () {
  if (over) return;
  if (!go(0, 1)) lock();
}, 550);

function paint() {
  ctx.fillStyle = "#868e96";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.strokeStyle = "#495057";
  ctx.lineWidth = 2;
  for (var by = 0; by < canvas.height; by += 20) {
    ctx.beginPath();
    ctx.moveTo(0, by);
    ctx.lineTo(canvas.width, by);
    ctx.stroke();
    for (var bx = (by / 20) % 2 ? 0 : 20; bx < canvas.width; bx += 40) {
      ctx.beginPath();
      ctx.moveTo(bx, by);
      ctx.lineTo(bx, by + 20);
      ctx.stroke();
    }
  }
  ctx.fillStyle = "#0b0c10";
  ctx.fillRect(LEFT, 0, field.cols * CELL, field.rows * CELL);
  var box = function (x, y, color) {
    ctx.fillStyle = color;
    ctx.fillRect(LEFT + x * CELL + 1, y * CELL + 1, CELL - 2, CELL - 2);
  };
  field.cells.forEach(function (row, y) {
    row.forEach(function (c, x) { if (c) box(x, y, c); });
  });
  if (!over) piece.parts.forEach(function (p) { box(piece.x + p[0], piece.y + p[1], piece.color); });
  if (over) {
    ctx.fillStyle = "rgba(0,0,0,0.8)";
    ctx.fillRect(LEFT, 220, field.cols * CELL, 60);
    ctx.fillStyle = "#ff6b6b";
    ctx.font = "bold 30px Arial";
    ctx.textAlign = "center";
    ctx.fillText("GAME OVER", LEFT + (field.cols * CELL) / 2, 260);
  }
  scoreEl.textContent = score;
  requestAnimationFrame(paint);
}

document.addEventListener("keydown", function (e) {
  if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " "].indexOf(e.key) < 0) return;
  e.preventDefault();
  if (over) return;
  if (e.key === "ArrowLeft") go(-1, 0);
  else if (e.key === "ArrowRight") go(1, 0);
  else if (e.key === "ArrowUp") {
    var parts = piece.turned();
    if (!field.blocked(parts, piece.x, piece.y)) piece.parts = parts;
  } else if (e.key === "ArrowDown") {
    if (go(0, 1)) score += 1;
    else lock();
  } else {
    while (go(0, 1)) score += 2;
    lock();
  }
});

spawn();
requestAnimationFrame(paint);
