// 落ちものパズル：キャンバス 1 枚（300x600、1 マス 30 px）に描く。
// 読み込み時に最初のピースまで用意して一時停止しておき、RESUME → 3・2・1 のカウントダウンで始まる。
// キー入力：keydown は押されているキー（e.code）を記録するだけ、keyup で消す。
// 60 Hz の setInterval ループがその集合を見て動かす（DAS 170 ms、ARR 30 ms）。
(function () {
  "use strict";
  const COLS = 10;
  const ROWS = 20;
  const CELL = 30;
  const GRAVITY_MS = 500;
  const TICK_MS = 1000 / 60;
  const DAS_MS = 170;
  const ARR_MS = 30;
  const COUNT_STEP_MS = 500; // 3・2・1 で合計 1.5 秒
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
  const COLOURS = { I: "#22d3ee", O: "#facc15", T: "#c084fc", S: "#4ade80", Z: "#f87171", J: "#60a5fa", L: "#fb923c" };
  const KINDS = Object.keys(SHAPES);
  // 押しっぱなしで繰り返すキー（それ以外は押すたびに 1 回だけ）
  const REPEATING = { ArrowLeft: true, ArrowRight: true, ArrowDown: true };

  const ctx = document.getElementById("board").getContext("2d");
  const scoreEl = document.getElementById("score");
  const pausedEl = document.getElementById("paused");
  const overEl = document.getElementById("over");
  const countEl = document.getElementById("countdown");
  const resumeBtn = document.getElementById("resume");
  const retryBtn = document.getElementById("retry");

  // state: "paused"（読み込み直後）| "countdown" | "running" | "over"
  let state = "paused";
  let board = [];
  let piece = null;
  let score = 0;
  let lastFall = 0;
  const held = new Set(); // いま押されているキー（e.code）
  let seen = {}; // ループが既に見たキー：code → { since, last }

  function emptyBoard() {
    return Array.from({ length: ROWS }, () => Array(COLS).fill(null));
  }

  function collides(shape, row, col) {
    for (let r = 0; r < shape.length; r++) {
      for (let c = 0; c < shape[r].length; c++) {
        if (!shape[r][c]) continue;
        const y = row + r;
        const x = col + c;
        if (x < 0 || x >= COLS || y >= ROWS) return true;
        if (y >= 0 && board[y][x]) return true;
      }
    }
    return false;
  }

  function turn(shape, dir) {
    // dir > 0：時計回り、dir < 0：反時計回り
    const h = shape.length;
    const w = shape[0].length;
    const out = [];
    for (let c = 0; c < w; c++) {
      const line = [];
      for (let r = 0; r < h; r++) line.push(dir > 0 ? shape[h - 1 - r][c] : shape[r][w - 1 - c]);
      out.push(line);
    }
    return out;
  }

  function spawn() {
    const kind = KINDS[Math.floor(Math.random() * KINDS.length)];
    const shape = SHAPES[kind];
    const p = { kind, shape, row: 0, col: Math.floor((COLS - shape[0].length) / 2) };
    if (collides(p.shape, p.row, p.col)) {
      // 新しいピースが置けない：ゲームオーバー、もう出さない
      piece = null;
      state = "over";
      overEl.hidden = false;
      return;
    }
    piece = p;
  }

  function lock() {
    const s = piece.shape;
    for (let r = 0; r < s.length; r++) {
      for (let c = 0; c < s[r].length; c++) {
        if (s[r][c] && piece.row + r >= 0) board[piece.row + r][piece.col + c] = piece.kind;
      }
    }
    const kept = board.filter((line) => line.some((v) => !v));
    const cleared = ROWS - kept.length;
    while (kept.length < ROWS) kept.unshift(Array(COLS).fill(null));
    board = kept;
    score += LINE_POINTS[cleared];
    piece = null;
    spawn();
  }

  function tryMove(dr, dc) {
    if (collides(piece.shape, piece.row + dr, piece.col + dc)) return false;
    piece.row += dr;
    piece.col += dc;
    return true;
  }

  function rotate(dir) {
    const shape = turn(piece.shape, dir);
    const base = piece.col + Math.floor((piece.shape[0].length - shape[0].length) / 2);
    for (const kick of [0, -1, 1, -2, 2]) {
      if (!collides(shape, piece.row, base + kick)) {
        piece.shape = shape;
        piece.col = base + kick;
        return;
      }
    }
  }

  function softDrop(first) {
    if (tryMove(1, 0)) {
      score += 1;
      lastFall = performance.now();
    } else if (first) {
      lock(); // 着地しているピースに ↓ をもう一度押すと固定
    }
  }

  function hardDrop() {
    let n = 0;
    while (tryMove(1, 0)) n++;
    score += 2 * n;
    lock(); // すぐに固定
    lastFall = performance.now();
  }

  function act(code, first) {
    if (!piece) return;
    if (code === "ArrowLeft") tryMove(0, -1);
    else if (code === "ArrowRight") tryMove(0, 1);
    else if (code === "ArrowDown") softDrop(first);
    else if (code === "ArrowUp") hardDrop();
    else if (code === "KeyX") rotate(1);
    else if (code === "KeyZ") rotate(-1);
  }

  function pollKeys(now) {
    for (const code of Object.keys(seen)) if (!held.has(code)) delete seen[code];
    for (const code of held) {
      const k = seen[code];
      if (!k) {
        seen[code] = { since: now, last: now };
        act(code, true);
      } else if (REPEATING[code] && now - k.since >= DAS_MS && now - k.last >= ARR_MS) {
        k.last = now;
        act(code, false);
      }
      if (state !== "running") return;
    }
  }

  function draw() {
    ctx.fillStyle = "#12151d";
    ctx.fillRect(0, 0, COLS * CELL, ROWS * CELL);
    ctx.strokeStyle = "#1d222e";
    ctx.lineWidth = 1;
    for (let c = 1; c < COLS; c++) {
      ctx.beginPath(); ctx.moveTo(c * CELL + 0.5, 0); ctx.lineTo(c * CELL + 0.5, ROWS * CELL); ctx.stroke();
    }
    for (let r = 1; r < ROWS; r++) {
      ctx.beginPath(); ctx.moveTo(0, r * CELL + 0.5); ctx.lineTo(COLS * CELL, r * CELL + 0.5); ctx.stroke();
    }
    const block = (r, c, kind) => {
      ctx.fillStyle = COLOURS[kind];
      ctx.fillRect(c * CELL + 1, r * CELL + 1, CELL - 2, CELL - 2);
    };
    for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) if (board[r][c]) block(r, c, board[r][c]);
    if (piece) {
      const s = piece.shape;
      for (let r = 0; r < s.length; r++) {
        for (let c = 0; c < s[r].length; c++) if (s[r][c] && piece.row + r >= 0) block(piece.row + r, piece.col + c, piece.kind);
      }
    }
    scoreEl.textContent = String(score);
  }

  function loop() {
    const now = performance.now();
    if (state === "running") {
      pollKeys(now);
      if (state === "running" && piece && now - lastFall >= GRAVITY_MS) {
        lastFall = now;
        if (!tryMove(1, 0)) lock();
      }
    } else {
      seen = {};
    }
    draw();
  }

  function countdown() {
    // 3・2・1 を大きな文字で出してから動き出す
    state = "countdown";
    pausedEl.hidden = true;
    overEl.hidden = true;
    let n = 3;
    countEl.textContent = String(n);
    countEl.hidden = false;
    const timer = setInterval(() => {
      n -= 1;
      if (n > 0) {
        countEl.textContent = String(n);
        return;
      }
      clearInterval(timer);
      countEl.hidden = true;
      countEl.textContent = "";
      state = "running";
      seen = {};
      lastFall = performance.now();
    }, COUNT_STEP_MS);
  }

  function newGame() {
    board = emptyBoard();
    score = 0;
    spawn();
  }

  document.addEventListener("keydown", (e) => {
    if (e.code.startsWith("Arrow")) e.preventDefault();
    held.add(e.code);
  });
  document.addEventListener("keyup", (e) => {
    held.delete(e.code);
  });
  window.addEventListener("blur", () => held.clear());

  resumeBtn.addEventListener("click", () => {
    resumeBtn.blur();
    if (state === "paused") countdown();
  });
  retryBtn.addEventListener("click", () => {
    retryBtn.blur();
    if (state !== "over") return;
    newGame();
    countdown();
  });

  newGame(); // 最初のピースまで用意して、一時停止のまま描く
  setInterval(loop, TICK_MS);
  draw();
})();
