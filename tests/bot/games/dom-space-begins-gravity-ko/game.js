// The first piece is drawn, and the arrow keys move it, as soon as the page loads; gravity
// only begins with Space ("press Space to start"), which afterwards is the hard drop.
(() => {
  const W = 10, H = 20;
  const SHAPES = {
    I: [[0, 1], [1, 1], [2, 1], [3, 1]], O: [[1, 0], [2, 0], [1, 1], [2, 1]],
    T: [[1, 0], [0, 1], [1, 1], [2, 1]], S: [[1, 0], [2, 0], [0, 1], [1, 1]],
    Z: [[0, 0], [1, 0], [1, 1], [2, 1]], J: [[0, 0], [0, 1], [1, 1], [2, 1]],
    L: [[2, 0], [0, 1], [1, 1], [2, 1]],
  };
  const COLOURS = { I: "#2bb3c0", O: "#e8c547", T: "#9b5de5", S: "#43aa8b", Z: "#e63946", J: "#277da1", L: "#f3722c" };
  const boardEl = document.getElementById("board");
  const scoreEl = document.getElementById("score");
  const overEl = document.getElementById("over");
  const hint = document.getElementById("hint");
  const cells = [];
  for (let i = 0; i < W * H; i++) {
    const d = document.createElement("div");
    d.className = "c";
    boardEl.appendChild(d);
    cells.push(d);
  }
  let grid, piece, score, running, over, timer;

  const spawn = () => {
    const kind = "IOTSZJL"[Math.floor(Math.random() * 7)];
    return { kind, blocks: SHAPES[kind].map(([x, y]) => [x + 3, y]) };
  };
  const fits = (blocks) => blocks.every(([x, y]) => x >= 0 && x < W && y < H && (y < 0 || !grid[y][x]));
  const shifted = (dx, dy) => piece.blocks.map(([x, y]) => [x + dx, y + dy]);
  const turned = () => {
    if (piece.kind === "O") return piece.blocks;
    const [cx, cy] = piece.blocks[2];
    return piece.blocks.map(([x, y]) => [cx - (y - cy), cy + (x - cx)]);
  };
  const draw = () => {
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const k = grid[y][x];
        cells[y * W + x].className = k ? "c on" : "c";
        cells[y * W + x].style.background = k ? COLOURS[k] : "";
      }
    if (!over)
      for (const [x, y] of piece.blocks)
        if (y >= 0) {
          cells[y * W + x].className = "c on";
          cells[y * W + x].style.background = COLOURS[piece.kind];
        }
    scoreEl.textContent = score;
  };
  const lock = () => {
    for (const [x, y] of piece.blocks) if (y >= 0) grid[y][x] = piece.kind;
    const kept = grid.filter((row) => row.some((v) => !v));
    const lines = H - kept.length;
    grid = Array.from({ length: lines }, () => Array(W).fill(null)).concat(kept);
    score += [0, 100, 300, 500, 800][lines];
    piece = spawn();
    if (!fits(piece.blocks)) {
      over = true;
      running = false;
      clearInterval(timer);
      overEl.textContent = "게임 오버 — 스페이스로 다시 시작";
    }
  };
  const step = () => {
    const down = shifted(0, 1);
    if (fits(down)) piece.blocks = down;
    else lock();
    draw();
  };
  const reset = () => {
    grid = Array.from({ length: H }, () => Array(W).fill(null));
    piece = spawn();
    score = 0;
    over = false;
    overEl.textContent = "";
  };
  const begin = () => {
    running = true;
    hint.textContent = "";
    clearInterval(timer);
    timer = setInterval(step, 550);
  };

  document.addEventListener("keydown", (e) => {
    if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " "].includes(e.key)) e.preventDefault();
    if (over) {
      if (e.key === " ") { reset(); begin(); draw(); }
      return;
    }
    if (e.key === " ") {
      if (!running) { begin(); return; }
      let down = shifted(0, 1);
      while (fits(down)) { piece.blocks = down; score += 2; down = shifted(0, 1); }
      lock();
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      const next = shifted(e.key === "ArrowLeft" ? -1 : 1, 0);
      if (fits(next)) piece.blocks = next;
    } else if (e.key === "ArrowDown") {
      const next = shifted(0, 1);
      if (fits(next)) { piece.blocks = next; score += 1; } else lock();
    } else if (e.key === "ArrowUp") {
      const next = turned();
      if (fits(next)) piece.blocks = next;
    } else return;
    draw();
  });

  reset();
  draw();
})();
