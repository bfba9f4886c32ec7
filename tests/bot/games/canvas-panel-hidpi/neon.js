// Class-based engine: flat Uint8Array board, pieces as cell offsets rotated about a pivot,
// 7-bag randomiser, requestAnimationFrame loop with a fixed-step time accumulator,
// devicePixelRatio-aware canvas (backing store at least 2x the CSS size).
"use strict";

const W = 10, H = 20, CELL = 30, PANEL = 170;
const CSS_W = W * CELL + PANEL, CSS_H = H * CELL;
const STEP_MS = 1000 / 60;
const PALETTE = [null, "#39c5ff", "#ffe156", "#c15cff", "#4cff7a", "#ff4d6d", "#4d7cff", "#ff9f43"];
// offsets relative to a pivot; index = colour id
const PIECES = [
  null,
  { cells: [[-1, 0], [0, 0], [1, 0], [2, 0]], pivot: "half" }, // I
  { cells: [[0, 0], [1, 0], [0, 1], [1, 1]], pivot: "none" }, // O
  { cells: [[-1, 0], [0, 0], [1, 0], [0, -1]], pivot: "cell" }, // T
  { cells: [[-1, 0], [0, 0], [0, -1], [1, -1]], pivot: "cell" }, // S
  { cells: [[-1, -1], [0, -1], [0, 0], [1, 0]], pivot: "cell" }, // Z
  { cells: [[-1, -1], [-1, 0], [0, 0], [1, 0]], pivot: "cell" }, // J
  { cells: [[1, -1], [-1, 0], [0, 0], [1, 0]], pivot: "cell" }, // L
];

class Piece {
  constructor(kind) {
    this.kind = kind;
    this.cells = PIECES[kind].cells.map(([x, y]) => [x, y]);
    this.x = 4;
    this.y = Math.max(...this.cells.map((c) => -c[1]));
  }
  clone() {
    const p = new Piece(this.kind);
    p.cells = this.cells.map(([x, y]) => [x, y]);
    p.x = this.x;
    p.y = this.y;
    return p;
  }
  rotated() {
    const p = this.clone();
    const mode = PIECES[this.kind].pivot;
    if (mode === "none") p.cells = this.cells.map(([x, y]) => [x, y]);
    else if (mode === "half") p.cells = this.cells.map(([x, y]) => [1 - y, x]);
    else p.cells = this.cells.map(([x, y]) => [-y, x]);
    return p;
  }
  blocks() {
    return this.cells.map(([cx, cy]) => [this.x + cx, this.y + cy]);
  }
}

class Game {
  constructor(canvas) {
    this.canvas = canvas;
    const ratio = Math.max(2, window.devicePixelRatio || 1);
    canvas.width = CSS_W * ratio;
    canvas.height = CSS_H * ratio;
    canvas.style.width = CSS_W + "px";
    canvas.style.height = CSS_H + "px";
    this.ctx = canvas.getContext("2d");
    this.ctx.scale(ratio, ratio);
    this.state = "idle";
    this.grid = new Uint8Array(W * H);
    this.score = 0;
    this.lines = 0;
    this.bag = [];
    this.render();
  }
  start() {
    this.grid.fill(0);
    this.score = 0;
    this.lines = 0;
    this.bag = [];
    this.next = this.draw7();
    this.spawn();
    this.state = "playing";
    this.fallAcc = 0;
    this.acc = 0;
    this.last = performance.now();
    if (!this.looping) {
      this.looping = true;
      requestAnimationFrame((t) => this.frame(t));
    }
  }
  draw7() {
    if (this.bag.length === 0) {
      this.bag = [1, 2, 3, 4, 5, 6, 7];
      for (let i = this.bag.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [this.bag[i], this.bag[j]] = [this.bag[j], this.bag[i]];
      }
    }
    return this.bag.pop();
  }
  spawn() {
    this.cur = new Piece(this.next);
    this.next = this.draw7();
    if (!this.fits(this.cur)) {
      this.state = "over";
    }
  }
  fits(p) {
    return p.blocks().every(([x, y]) => x >= 0 && x < W && y >= 0 && y < H && !this.grid[y * W + x]);
  }
  shift(dx, dy) {
    const p = this.cur.clone();
    p.x = this.cur.x + dx;
    p.y = this.cur.y + dy;
    if (this.fits(p)) {
      this.cur = p;
      return true;
    }
    return false;
  }
  turn() {
    const r = this.cur.rotated();
    for (const [kx, ky] of [[0, 0], [-1, 0], [1, 0], [0, 1]]) {
      r.x = this.cur.x + kx;
      r.y = this.cur.y + ky;
      if (this.fits(r)) {
        this.cur = r;
        return;
      }
    }
  }
  ghostY() {
    let dy = 0;
    const probe = new Piece(this.cur.kind);
    probe.cells = this.cur.cells;
    probe.x = this.cur.x;
    while (true) {
      probe.y = this.cur.y + dy + 1;
      if (!this.fits(probe)) return this.cur.y + dy;
      dy++;
    }
  }
  settle() {
    for (const [x, y] of this.cur.blocks()) this.grid[y * W + x] = this.cur.kind;
    let cleared = 0;
    for (let row = H - 1; row >= 0; row--) {
      let full = true;
      for (let col = 0; col < W; col++) if (!this.grid[row * W + col]) full = false;
      if (full) {
        this.grid.copyWithin(W, 0, row * W);
        this.grid.fill(0, 0, W);
        cleared++;
        row++;
      }
    }
    this.lines += cleared;
    this.score += [0, 40, 100, 300, 1200][cleared] * 10;
    this.spawn();
  }
  key(k) {
    if (this.state !== "playing") return;
    if (k === "ArrowLeft") this.shift(-1, 0);
    else if (k === "ArrowRight") this.shift(1, 0);
    else if (k === "ArrowDown") {
      if (this.shift(0, 1)) this.score += 1;
      this.fallAcc = 0;
    } else if (k === "ArrowUp") this.turn();
    else if (k === " ") {
      const gy = this.ghostY();
      this.score += 2 * (gy - this.cur.y);
      this.cur.y = gy;
      this.settle();
    }
    this.render();
  }
  gravityMs() {
    return Math.max(400, 750 - Math.floor(this.lines / 10) * 50);
  }
  frame(now) {
    this.acc += Math.min(250, now - this.last);
    this.last = now;
    while (this.acc >= STEP_MS) {
      this.acc -= STEP_MS;
      if (this.state === "playing") {
        this.fallAcc += STEP_MS;
        if (this.fallAcc >= this.gravityMs()) {
          this.fallAcc = 0;
          if (!this.shift(0, 1)) this.settle();
        }
      }
    }
    this.render();
    requestAnimationFrame((t) => this.frame(t));
  }
  block(ctx, x, y, kind, size) {
    ctx.fillStyle = PALETTE[kind];
    ctx.fillRect(x + 1, y + 1, size - 2, size - 2);
    ctx.fillStyle = "rgba(255,255,255,0.25)";
    ctx.fillRect(x + 1, y + 1, size - 2, 4);
  }
  render() {
    const ctx = this.ctx;
    ctx.fillStyle = "#0d1117";
    ctx.fillRect(0, 0, CSS_W, CSS_H);
    ctx.fillStyle = "#161b22";
    ctx.fillRect(0, 0, W * CELL, H * CELL);
    for (let i = 0; i < W * H; i++) {
      if (this.grid[i]) this.block(ctx, (i % W) * CELL, Math.floor(i / W) * CELL, this.grid[i], CELL);
    }
    if (this.state === "playing") {
      const gy = this.ghostY();
      ctx.strokeStyle = PALETTE[this.cur.kind];
      ctx.globalAlpha = 0.6;
      ctx.lineWidth = 2;
      for (const [cx, cy] of this.cur.cells) {
        ctx.strokeRect((this.cur.x + cx) * CELL + 3, (gy + cy) * CELL + 3, CELL - 6, CELL - 6);
      }
      ctx.globalAlpha = 1;
      for (const [x, y] of this.cur.blocks()) this.block(ctx, x * CELL, y * CELL, this.cur.kind, CELL);
    }
    // side panel
    const px = W * CELL + 20;
    ctx.strokeStyle = "#30363d";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(W * CELL + 1, 0);
    ctx.lineTo(W * CELL + 1, CSS_H);
    ctx.stroke();
    ctx.fillStyle = "#8b949e";
    ctx.font = "bold 18px 'Courier New', monospace";
    ctx.textAlign = "left";
    ctx.fillText("NEXT", px, 36);
    ctx.strokeStyle = "#30363d";
    ctx.strokeRect(px, 48, 120, 90);
    if (this.state !== "idle") {
      const shape = PIECES[this.next].cells;
      for (const [cx, cy] of shape) this.block(ctx, px + 45 + cx * 20, 88 + cy * 20, this.next, 20);
    }
    ctx.fillStyle = "#8b949e";
    ctx.fillText("SCORE", px, 190);
    ctx.fillStyle = "#f0f6fc";
    ctx.font = "bold 28px 'Courier New', monospace";
    ctx.fillText(String(this.score), px, 224);
    ctx.fillStyle = "#8b949e";
    ctx.font = "bold 18px 'Courier New', monospace";
    ctx.fillText("LINES", px, 276);
    ctx.fillStyle = "#f0f6fc";
    ctx.font = "bold 28px 'Courier New', monospace";
    ctx.fillText(String(this.lines), px, 310);
    if (this.state === "over") {
      ctx.fillStyle = "rgba(0,0,0,0.75)";
      ctx.fillRect(0, 250, W * CELL, 100);
      ctx.fillStyle = "#ff4d6d";
      ctx.font = "bold 34px 'Courier New', monospace";
      ctx.textAlign = "center";
      ctx.fillText("GAME OVER", (W * CELL) / 2, 310);
    } else if (this.state === "idle") {
      ctx.fillStyle = "#8b949e";
      ctx.font = "bold 20px 'Courier New', monospace";
      ctx.textAlign = "center";
      ctx.fillText("Press Start", (W * CELL) / 2, 300);
    }
  }
}

const game = new Game(document.getElementById("screen"));
const startButton = document.getElementById("start");
startButton.addEventListener("click", () => {
  game.start();
  startButton.blur();
});
window.addEventListener("keydown", (e) => {
  if (["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "].includes(e.key)) {
    e.preventDefault();
    game.key(e.key);
  }
});
