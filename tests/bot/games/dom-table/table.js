// Prototype-based engine: board = array of arrays of colour ids (0 = empty), pieces rotated with
// transpose + reverse, gravity via recursive setTimeout, rendering by inline td background colours.
function Tetris(table, scoreEl, banner) {
  this.table = table;
  this.scoreEl = scoreEl;
  this.banner = banner;
  this.tds = [];
  for (var r = 0; r < Tetris.ROWS; r++) {
    var tr = table.insertRow();
    var line = [];
    for (var c = 0; c < Tetris.COLS; c++) line.push(tr.insertCell());
    this.tds.push(line);
  }
  this.status = "waiting";
  this.grid = this.blank();
  this.draw();
}

Tetris.ROWS = 20;
Tetris.COLS = 10;
Tetris.DELAY = 550;
Tetris.COLORS = ["#fffdf2", "#2bb3c0", "#f2c14e", "#8e44ad", "#3fa34d", "#d7263d", "#1b4b9b", "#f46036"];
Tetris.SHAPES = [
  null,
  [[1, 1, 1, 1]],
  [[2, 2], [2, 2]],
  [[0, 3, 0], [3, 3, 3]],
  [[0, 4, 4], [4, 4, 0]],
  [[5, 5, 0], [0, 5, 5]],
  [[6, 0, 0], [6, 6, 6]],
  [[0, 0, 7], [7, 7, 7]]
];

Tetris.prototype.blank = function () {
  var g = [];
  for (var r = 0; r < Tetris.ROWS; r++) g.push(new Array(Tetris.COLS).fill(0));
  return g;
};

Tetris.prototype.start = function () {
  this.grid = this.blank();
  this.score = 0;
  this.status = "running";
  this.banner.textContent = "";
  this.spawn();
  this.draw();
  this.schedule();
};

Tetris.prototype.schedule = function () {
  var self = this;
  clearTimeout(this.timeout);
  this.timeout = setTimeout(function () {
    if (self.status !== "running") return;
    self.fall();
    self.draw();
    self.schedule();
  }, Tetris.DELAY);
};

Tetris.prototype.spawn = function () {
  var id = 1 + Math.floor(Math.random() * 7);
  var shape = Tetris.SHAPES[id];
  this.active = { shape: shape, row: 0, col: Math.floor((Tetris.COLS - shape[0].length) / 2) };
  if (this.hits(shape, 0, this.active.col)) this.end();
};

Tetris.prototype.hits = function (shape, row, col) {
  for (var r = 0; r < shape.length; r++) {
    for (var c = 0; c < shape[r].length; c++) {
      if (!shape[r][c]) continue;
      var y = row + r, x = col + c;
      if (y < 0 || y >= Tetris.ROWS || x < 0 || x >= Tetris.COLS) return true;
      if (this.grid[y][x]) return true;
    }
  }
  return false;
};

Tetris.prototype.shift = function (dr, dc) {
  var a = this.active;
  if (this.hits(a.shape, a.row + dr, a.col + dc)) return false;
  a.row += dr;
  a.col += dc;
  return true;
};

Tetris.prototype.rotate = function () {
  var s = this.active.shape;
  var t = s[0].map(function (_, c) {
    return s.map(function (row) { return row[c]; }).reverse();
  });
  var offset = Math.floor((s[0].length - t[0].length) / 2);
  var col = this.active.col + offset;
  if (!this.hits(t, this.active.row, col)) {
    this.active.shape = t;
    this.active.col = col;
  }
};

Tetris.prototype.fall = function () {
  if (!this.shift(1, 0)) this.freeze();
};

Tetris.prototype.freeze = function () {
  var a = this.active;
  for (var r = 0; r < a.shape.length; r++) {
    for (var c = 0; c < a.shape[r].length; c++) {
      if (a.shape[r][c]) this.grid[a.row + r][a.col + c] = a.shape[r][c];
    }
  }
  var full = 0;
  for (var y = Tetris.ROWS - 1; y >= 0; y--) {
    if (this.grid[y].indexOf(0) === -1) {
      this.grid.splice(y, 1);
      this.grid.unshift(new Array(Tetris.COLS).fill(0));
      full++;
      y++;
    }
  }
  this.score += [0, 100, 300, 500, 800][full];
  this.spawn();
};

Tetris.prototype.end = function () {
  this.status = "over";
  clearTimeout(this.timeout);
  this.banner.textContent = "Game Over - press R to restart";
};

Tetris.prototype.draw = function () {
  var view = this.grid.map(function (row) { return row.slice(); });
  var a = this.active;
  if (a && this.status === "running") {
    for (var r = 0; r < a.shape.length; r++) {
      for (var c = 0; c < a.shape[r].length; c++) {
        if (a.shape[r][c]) view[a.row + r][a.col + c] = a.shape[r][c];
      }
    }
  }
  for (var y = 0; y < Tetris.ROWS; y++) {
    for (var x = 0; x < Tetris.COLS; x++) this.tds[y][x].style.backgroundColor = Tetris.COLORS[view[y][x]];
  }
  this.scoreEl.textContent = this.score || 0;
};

Tetris.prototype.handle = function (key) {
  if (this.status === "waiting") return this.start();
  if (this.status === "over") {
    if (key === "r") this.start();
    return;
  }
  if (key === "j") this.shift(0, -1);
  else if (key === "l") this.shift(0, 1);
  else if (key === "k") {
    if (this.shift(1, 0)) this.score += 1;
    else this.freeze();
  } else if (key === "i") this.rotate();
  else if (key === " ") {
    while (this.shift(1, 0)) this.score += 2;
    this.freeze();
  } else return;
  this.draw();
};

var tetris = new Tetris(document.getElementById("field"), document.getElementById("score"),
  document.getElementById("banner"));
document.addEventListener("keydown", function (e) {
  if (e.key === " ") e.preventDefault();
  tetris.handle(e.key.length === 1 ? e.key.toLowerCase() : e.key);
});
