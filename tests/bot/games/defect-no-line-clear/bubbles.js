// One setInterval(16 ms) loop with a Date.now() delta; cells drawn as round bubbles.
// Score: +10 per piece placed, +1 per soft-drop row, +2 per hard-drop row, bonus per cleared line.
// DEFECT: the full-row test compares colour strings with a number ("#ca6702" > 0 is false),
// so no row ever counts as full and completed rows never disappear.
(function () {
  var cols = 10, rows = 20, cell = 24, fallEvery = 600;
  var colours = ["#94d2bd", "#e9d8a6", "#ee9b00", "#ca6702", "#bb3e03", "#ae2012", "#0a9396"];
  var shapes = [
    [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
    [[1, 1], [1, 1]],
    [[0, 1, 0], [1, 1, 1], [0, 0, 0]],
    [[0, 1, 1], [1, 1, 0], [0, 0, 0]],
    [[1, 1, 0], [0, 1, 1], [0, 0, 0]],
    [[1, 0, 0], [1, 1, 1], [0, 0, 0]],
    [[0, 0, 1], [1, 1, 1], [0, 0, 0]]
  ];
  var ctx = document.getElementById("well").getContext("2d");
  var scoreEl = document.getElementById("score");
  var overEl = document.getElementById("over");
  var grid = [];
  for (var i = 0; i < rows; i++) grid.push(new Array(cols).fill(""));
  var active, score = 0, ended = false, acc = 0, then = Date.now();

  function make() {
    var k = Math.floor(Math.random() * shapes.length);
    var m = shapes[k];
    var skip = m.findIndex(function (r) { return r.indexOf(1) >= 0; });
    active = { m: m, colour: colours[k], x: Math.floor((cols - m.length) / 2), y: -skip };
    if (blocked(active.m, active.x, active.y)) finish();
  }
  function blocked(m, px, py) {
    for (var r = 0; r < m.length; r++) {
      for (var c = 0; c < m.length; c++) {
        if (!m[r][c]) continue;
        var x = px + c, y = py + r;
        if (x < 0 || x >= cols || y >= rows) return true;
        if (y >= 0 && grid[y][x]) return true;
      }
    }
    return false;
  }
  function slide(dx, dy) {
    if (blocked(active.m, active.x + dx, active.y + dy)) return false;
    active.x += dx;
    active.y += dy;
    return true;
  }
  function turn() {
    var m = active.m, n = m.length, out = [];
    for (var r = 0; r < n; r++) {
      out.push([]);
      for (var c = 0; c < n; c++) out[r].push(m[n - 1 - c][r]);
    }
    if (!blocked(out, active.x, active.y)) active.m = out;
  }
  function settle() {
    for (var r = 0; r < active.m.length; r++) {
      for (var c = 0; c < active.m.length; c++) {
        if (!active.m[r][c]) continue;
        if (active.y + r < 0) return finish();
        grid[active.y + r][active.x + c] = active.colour;
      }
    }
    score += 10;
    var kept = grid.filter(function (row) {
      return !row.every(function (v) { return v > 0; }); // BUG: v is a colour string
    });
    var cleared = rows - kept.length;
    while (kept.length < rows) kept.unshift(new Array(cols).fill(""));
    grid = kept;
    score += cleared * 100;
    make();
  }
  function finish() {
    ended = true;
    overEl.textContent = "Game Over";
  }
  function bubble(x, y, colour) {
    ctx.fillStyle = colour;
    ctx.beginPath();
    ctx.arc(x * cell + cell / 2, y * cell + cell / 2, cell / 2 - 1.5, 0, Math.PI * 2);
    ctx.fill();
  }
  function render() {
    ctx.clearRect(0, 0, cols * cell, rows * cell);
    grid.forEach(function (row, y) {
      row.forEach(function (v, x) { if (v) bubble(x, y, v); });
    });
    if (!ended) {
      active.m.forEach(function (row, r) {
        row.forEach(function (v, c) { if (v && active.y + r >= 0) bubble(active.x + c, active.y + r, active.colour); });
      });
    } else {
      ctx.fillStyle = "rgba(0, 18, 25, 0.8)";
      ctx.fillRect(0, 200, cols * cell, 80);
      ctx.fillStyle = "#ae2012";
      ctx.font = "bold 30px Helvetica, Arial, sans-serif";
      ctx.textAlign = "center";
      ctx.fillText("GAME OVER", (cols * cell) / 2, 250);
    }
    scoreEl.textContent = score;
  }
  function loop() {
    var now = Date.now();
    acc += now - then;
    then = now;
    if (!ended && acc >= fallEvery) {
      acc = 0;
      if (!slide(0, 1)) settle();
    }
    render();
  }
  window.addEventListener("keydown", function (e) {
    var k = e.key;
    if (k !== "ArrowLeft" && k !== "ArrowRight" && k !== "ArrowDown" && k !== "ArrowUp" && k !== " ") return;
    e.preventDefault();
    if (ended) return;
    if (k === "ArrowLeft") slide(-1, 0);
    if (k === "ArrowRight") slide(1, 0);
    if (k === "ArrowUp") turn();
    if (k === "ArrowDown") {
      if (slide(0, 1)) score += 1;
      else settle();
    }
    if (k === " ") {
      while (slide(0, 1)) score += 2;
      settle();
    }
  });
  make();
  setInterval(loop, 16);
})();
