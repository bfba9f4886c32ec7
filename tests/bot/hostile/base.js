// A small working Tetris used by the hostile pages; each page adds one misbehaviour.
(function () {
  const C = 10, R = 20, S = 24;
  const canvas = document.getElementById("field");
  const ctx = canvas.getContext("2d");
  const SHAPES = [[[0,0],[0,1],[0,2],[0,3]],[[0,0],[0,1],[1,0],[1,1]],[[0,0],[0,1],[0,2],[1,1]],
    [[0,1],[0,2],[1,0],[1,1]],[[0,0],[0,1],[1,1],[1,2]],[[0,0],[1,0],[1,1],[1,2]],[[0,2],[1,0],[1,1],[1,2]]];
  const COLOURS = ["#4dd", "#dd4", "#a4d", "#4d4", "#d44", "#44d", "#d94"];
  let grid = Array.from({ length: R }, () => Array(C).fill(0));
  let piece = null, score = 0, over = false;
  const fits = (cells) => cells.every(([r, c]) => c >= 0 && c < C && r < R && (r < 0 || !grid[r][c]));
  function spawn() {
    const k = Math.floor(Math.random() * 7);
    piece = { k, cells: SHAPES[k].map(([r, c]) => [r, c + 3]) };
    if (!fits(piece.cells)) over = true;
  }
  function move(dr, dc) {
    const next = piece.cells.map(([r, c]) => [r + dr, c + dc]);
    if (fits(next)) { piece.cells = next; return true; }
    return false;
  }
  function turn() {
    if (piece.k === 1) return;
    const [pr, pc] = piece.cells[1];
    const next = piece.cells.map(([r, c]) => [pr + (c - pc), pc - (r - pr)]);
    if (fits(next)) piece.cells = next;
  }
  function land() {
    piece.cells.forEach(([r, c]) => { if (r >= 0) grid[r][c] = piece.k + 1; });
    const kept = grid.filter((row) => !row.every(Boolean));
    score += (R - kept.length) * 100 + 5;
    while (kept.length < R) kept.unshift(Array(C).fill(0));
    grid = kept;
    document.getElementById("score").textContent = String(score);
    spawn();
  }
  function draw() {
    ctx.fillStyle = "#111"; ctx.fillRect(0, 0, C * S, R * S);
    const cell = (r, c, k) => { ctx.fillStyle = COLOURS[k]; ctx.fillRect(c * S + 1, r * S + 1, S - 2, S - 2); };
    grid.forEach((row, r) => row.forEach((v, c) => v && cell(r, c, v - 1)));
    if (!over) piece.cells.forEach(([r, c]) => r >= 0 && cell(r, c, piece.k));
    else { ctx.fillStyle = "#fff"; ctx.font = "24px sans-serif"; ctx.fillText("GAME OVER", 50, 240); }
  }
  document.addEventListener("keydown", (e) => {
    if (over) return;
    if (e.key === "ArrowLeft") move(0, -1);
    else if (e.key === "ArrowRight") move(0, 1);
    else if (e.key === "ArrowDown") move(1, 0);
    else if (e.key === "ArrowUp") turn();
    else if (e.key === " ") { while (move(1, 0)); land(); }
    draw();
  });
  window.baseGame = { start() { spawn(); draw(); setInterval(() => { if (!over) { if (!move(1, 0)) land(); draw(); } }, 450); } };
})();
