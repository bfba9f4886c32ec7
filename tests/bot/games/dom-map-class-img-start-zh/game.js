// 俄罗斯方块：一个经典脚本（不是模块），没有构建步骤。
// 棋盘是 200 个 <div>，放在 CSS 网格里，靠切换 class 来上色。
"use strict";

// 游戏的地图：rows 行，每行 cols 个格子；空格子是 ""，否则是方块种类（I、O、T……）。
// 它负责碰撞检测、把方块固定下来和消行。
// 注意：这是顶层的 class 声明，从此以后页面里执行的脚本看到的 Map 都是它，不是浏览器自带的 Map。
// 本游戏自己不使用自带的 Map。
class Map {
  constructor(cols, rows) {
    this.cols = cols;
    this.rows = rows;
    this.reset();
  }

  emptyRow() {
    return new Array(this.cols).fill("");
  }

  reset() {
    this.cells = [];
    for (let r = 0; r < this.rows; r++) this.cells.push(this.emptyRow());
  }

  get(row, col) {
    return this.cells[row][col];
  }

  // 形状（0/1 矩阵）放在 (row, col) 时是否撞墙、撞底或撞到已有的方块
  collides(shape, row, col) {
    for (let r = 0; r < shape.length; r++) {
      for (let c = 0; c < shape[r].length; c++) {
        if (!shape[r][c]) continue;
        const y = row + r;
        const x = col + c;
        if (x < 0 || x >= this.cols || y >= this.rows) return true;
        if (y >= 0 && this.cells[y][x]) return true;
      }
    }
    return false;
  }

  place(shape, row, col, kind) {
    for (let r = 0; r < shape.length; r++) {
      for (let c = 0; c < shape[r].length; c++) {
        if (shape[r][c] && row + r >= 0) this.cells[row + r][col + c] = kind;
      }
    }
  }

  // 删除所有填满的行，上面的行往下移；返回消掉的行数
  clearLines() {
    const kept = this.cells.filter((line) => line.some((v) => v === ""));
    const cleared = this.rows - kept.length;
    for (let i = 0; i < cleared; i++) kept.unshift(this.emptyRow());
    this.cells = kept;
    return cleared;
  }
}

(function () {
  const COLS = 10;
  const ROWS = 20;
  const GRAVITY_MS = 600;
  const LINE_POINTS = [0, 100, 300, 500, 800];
  const SHAPES = {
    I: [[1, 1, 1, 1]],
    O: [[1, 1], [1, 1]],
    T: [[0, 1, 0], [1, 1, 1]],
    S: [[0, 1, 1], [1, 1, 0]],
    Z: [[1, 1, 0], [0, 1, 1]],
    J: [[1, 0, 0], [1, 1, 1]],
    L: [[0, 0, 1], [1, 1, 1]],
  };
  const KINDS = Object.keys(SHAPES);

  const boardEl = document.getElementById("board");
  const scoreEl = document.getElementById("score");
  const messageEl = document.getElementById("message");
  const startImg = document.getElementById("startGame");
  const pauseImg = document.getElementById("pauseGame");

  const map = new Map(COLS, ROWS);
  const cellEls = [];
  for (let i = 0; i < COLS * ROWS; i++) {
    const d = document.createElement("div");
    d.className = "cell";
    boardEl.appendChild(d);
    cellEls.push(d);
  }

  // state: "idle"（还没开始）| "running" | "paused" | "over"
  let state = "idle";
  let piece = null;
  let score = 0;

  function rotateClockwise(shape) {
    const h = shape.length;
    const w = shape[0].length;
    const out = [];
    for (let c = 0; c < w; c++) {
      const line = [];
      for (let r = h - 1; r >= 0; r--) line.push(shape[r][c]);
      out.push(line);
    }
    return out;
  }

  function render() {
    for (let r = 0; r < ROWS; r++) {
      for (let c = 0; c < COLS; c++) {
        const k = map.get(r, c);
        cellEls[r * COLS + c].className = k ? "cell filled k-" + k : "cell";
      }
    }
    if (piece) {
      const s = piece.shape;
      for (let r = 0; r < s.length; r++) {
        for (let c = 0; c < s[r].length; c++) {
          const y = piece.row + r;
          if (s[r][c] && y >= 0) cellEls[y * COLS + piece.col + c].className = "cell filled k-" + piece.kind;
        }
      }
    }
    scoreEl.textContent = String(score);
  }

  function spawn() {
    const kind = KINDS[Math.floor(Math.random() * KINDS.length)];
    const shape = SHAPES[kind];
    const p = { kind, shape, row: 0, col: Math.floor((COLS - shape[0].length) / 2) };
    if (map.collides(p.shape, p.row, p.col)) {
      // 放不下新方块：游戏结束，不再生成
      piece = null;
      state = "over";
      messageEl.textContent = "游戏结束";
      return;
    }
    piece = p;
  }

  function lockPiece() {
    map.place(piece.shape, piece.row, piece.col, piece.kind);
    score += LINE_POINTS[map.clearLines()];
    piece = null;
    spawn();
  }

  function tryMove(dr, dc) {
    if (map.collides(piece.shape, piece.row + dr, piece.col + dc)) return false;
    piece.row += dr;
    piece.col += dc;
    return true;
  }

  function rotate() {
    const shape = rotateClockwise(piece.shape);
    const base = piece.col + Math.floor((piece.shape[0].length - shape[0].length) / 2);
    for (const kick of [0, -1, 1, -2, 2]) {
      if (!map.collides(shape, piece.row, base + kick)) {
        piece.shape = shape;
        piece.col = base + kick;
        return;
      }
    }
  }

  function softDrop() {
    if (tryMove(1, 0)) score += 1;
    else lockPiece();
  }

  function hardDrop() {
    let n = 0;
    while (tryMove(1, 0)) n++;
    score += 2 * n;
    lockPiece();
  }

  function startGame() {
    map.reset();
    score = 0;
    messageEl.textContent = "";
    state = "running";
    spawn();
    render();
  }

  setInterval(() => {
    if (state !== "running" || !piece) return;
    if (!tryMove(1, 0)) lockPiece();
    render();
  }, GRAVITY_MS);

  startImg.addEventListener("click", startGame);
  pauseImg.addEventListener("click", () => {
    if (state === "running") {
      state = "paused";
      messageEl.textContent = "暂停";
    } else if (state === "paused") {
      state = "running";
      messageEl.textContent = "";
    }
  });

  document.addEventListener("keydown", (e) => {
    const keys = ["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "];
    if (!keys.includes(e.key)) return;
    e.preventDefault();
    if (state !== "running" || !piece) return; // 开始之前按键没有作用
    if (e.key === "ArrowLeft") tryMove(0, -1);
    else if (e.key === "ArrowRight") tryMove(0, 1);
    else if (e.key === "ArrowDown") softDrop();
    else if (e.key === "ArrowUp") rotate();
    else hardDrop();
    render();
  });

  render();
})();
