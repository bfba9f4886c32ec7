// Closure engine: generator for the piece sequence, precomputed rotation tables, board as rows of
// piece letters, fixed 50 ms setInterval "frames" with gravity every 13 frames (650 ms).
(function () {
  var NS = "http://www.w3.org/2000/svg";
  var C = 20;
  var FILL = { I: "#48dbfb", O: "#feca57", T: "#a29bfe", S: "#1dd1a1", Z: "#ff6b6b", J: "#54a0ff", L: "#ff9f43" };
  var BASE = {
    I: [[0, 1], [1, 1], [2, 1], [3, 1]],
    O: [[1, 0], [2, 0], [1, 1], [2, 1]],
    T: [[1, 0], [0, 1], [1, 1], [2, 1]],
    S: [[1, 0], [2, 0], [0, 1], [1, 1]],
    Z: [[0, 0], [1, 0], [1, 1], [2, 1]],
    J: [[0, 0], [0, 1], [1, 1], [2, 1]],
    L: [[2, 0], [0, 1], [1, 1], [2, 1]]
  };
  // rotation table: ROT[k][r] = cells; I and O rotate in a 4x4 box, others in 3x3
  var ROT = {};
  Object.keys(BASE).forEach(function (k) {
    var size = k === "I" || k === "O" ? 4 : 3;
    var list = [BASE[k]];
    for (var r = 1; r < 4; r++) {
      list.push(list[r - 1].map(function (c) { return k === "O" ? c : [size - 1 - c[1], c[0]]; }));
    }
    ROT[k] = list;
  });

  function* sequence() {
    var keys = Object.keys(BASE);
    while (true) yield keys[Math.floor(Math.random() * keys.length)];
  }

  function rect(parent, x, y, size) {
    var el = document.createElementNS(NS, "rect");
    el.setAttribute("x", x);
    el.setAttribute("y", y);
    el.setAttribute("width", size - 2);
    el.setAttribute("height", size - 2);
    el.setAttribute("rx", 3);
    parent.appendChild(el);
    return el;
  }

  var boardG = document.getElementById("board");
  var nextG = document.getElementById("next");
  var scoreText = document.getElementById("score");
  var overText = document.getElementById("over");
  var rects = [];
  for (var y = 0; y < 20; y++) {
    rects.push([]);
    for (var x = 0; x < 10; x++) rects[y].push(rect(boardG, x * C + 1, y * C + 1, C));
  }
  var nextRects = [];
  for (var i = 0; i < 16; i++) nextRects.push(rect(nextG, (i % 4) * 16, Math.floor(i / 4) * 16, 16));

  var rows, seq, cur, nextKind, score, frames, timer, alive = false;

  function blocks(p) {
    return ROT[p.k][p.r].map(function (c) { return [p.x + c[0], p.y + c[1]]; });
  }
  function ok(p) {
    return blocks(p).every(function (b) {
      return b[0] >= 0 && b[0] < 10 && b[1] < 20 && (b[1] < 0 || !rows[b[1]][b[0]]);
    });
  }
  function with_(p, dx, dy, dr) {
    return { k: p.k, r: (p.r + dr + 4) % 4, x: p.x + dx, y: p.y + dy };
  }
  function spawn() {
    var k = nextKind;
    nextKind = seq.next().value;
    var top = Math.min.apply(null, ROT[k][0].map(function (c) { return c[1]; }));
    cur = { k: k, r: 0, x: 3, y: -top };
    if (!ok(cur)) die();
  }
  function die() {
    alive = false;
    clearInterval(timer);
    overText.setAttribute("visibility", "visible");
  }
  function fix() {
    var above = blocks(cur).some(function (b) { return b[1] < 0; });
    if (above) return die();
    blocks(cur).forEach(function (b) { rows[b[1]][b[0]] = cur.k; });
    var n = 0;
    rows = rows.filter(function (row) {
      var full = row.every(function (v) { return v; });
      if (full) n++;
      return !full;
    });
    while (rows.length < 20) rows.unshift(new Array(10).fill(""));
    score += [0, 100, 300, 500, 800][n];
    spawn();
  }
  function tryApply(p) {
    if (!ok(p)) return false;
    cur = p;
    return true;
  }
  function paint() {
    for (var y = 0; y < 20; y++) {
      for (var x = 0; x < 10; x++) rects[y][x].setAttribute("fill", rows[y][x] ? FILL[rows[y][x]] : "#1c0f21");
    }
    if (alive) {
      blocks(cur).forEach(function (b) {
        if (b[1] >= 0) rects[b[1]][b[0]].setAttribute("fill", FILL[cur.k]);
      });
    }
    nextRects.forEach(function (r) { r.setAttribute("fill", "#1c0f21"); });
    if (nextKind) ROT[nextKind][0].forEach(function (c) { nextRects[c[1] * 4 + c[0]].setAttribute("fill", FILL[nextKind]); });
    scoreText.textContent = String(score);
  }
  function frame() {
    if (!alive) return;
    frames++;
    if (frames % 13 === 0 && !tryApply(with_(cur, 0, 1, 0))) fix();
    paint();
  }
  function newGame() {
    rows = [];
    for (var y = 0; y < 20; y++) rows.push(new Array(10).fill(""));
    seq = sequence();
    nextKind = seq.next().value;
    score = 0;
    frames = 0;
    alive = true;
    overText.setAttribute("visibility", "hidden");
    spawn();
    paint();
    clearInterval(timer);
    timer = setInterval(frame, 50);
  }

  document.getElementById("new").addEventListener("click", function (e) {
    e.currentTarget.blur();
    newGame();
  });
  document.addEventListener("keydown", function (e) {
    var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === " " || key.indexOf("Arrow") === 0) e.preventDefault();
    if (!alive) return;
    if (key === "ArrowLeft") tryApply(with_(cur, -1, 0, 0));
    else if (key === "ArrowRight") tryApply(with_(cur, 1, 0, 0));
    else if (key === "ArrowDown") {
      if (tryApply(with_(cur, 0, 1, 0))) score += 1;
      else fix();
    } else if (key === "ArrowUp" || key === "x") tryApply(with_(cur, 0, 0, 1));
    else if (key === "z") tryApply(with_(cur, 0, 0, -1));
    else if (key === " ") {
      while (tryApply(with_(cur, 0, 1, 0))) score += 2;
      fix();
    } else return;
    paint();
  });

  rows = [];
  for (var r = 0; r < 20; r++) rows.push(new Array(10).fill(""));
  score = 0;
  nextKind = null;
  paint();
})();
