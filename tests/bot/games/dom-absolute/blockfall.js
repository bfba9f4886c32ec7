// Sparse engine: only filled cells exist (Map "x,y" -> colour). Every animation frame the
// whole #pit innerHTML is rebuilt from scratch with absolutely positioned divs.
class Blockfall {
  static SIZE = 25;
  static COLS = 10;
  static ROWS = 20;
  static KINDS = {
    I: { n: 4, cells: "0,1 1,1 2,1 3,1", color: "#4cc9f0" },
    O: { n: 2, cells: "0,0 1,0 0,1 1,1", color: "#ffd166" },
    T: { n: 3, cells: "1,0 0,1 1,1 2,1", color: "#b5179e" },
    S: { n: 3, cells: "1,0 2,0 0,1 1,1", color: "#06d6a0" },
    Z: { n: 3, cells: "0,0 1,0 1,1 2,1", color: "#ef476f" },
    J: { n: 3, cells: "0,0 0,1 1,1 2,1", color: "#4361ee" },
    L: { n: 3, cells: "2,0 0,1 1,1 2,1", color: "#f8961e" },
  };

  constructor(pit, scoreEl) {
    this.pit = pit;
    this.scoreEl = scoreEl;
    this.filled = new Map();
    this.score = 0;
    this.dead = false;
    this.gravity = 700;
    this.elapsed = 0;
    this.prev = null;
    this.spawn();
    document.addEventListener("keydown", (e) => this.onKey(e));
    requestAnimationFrame((t) => this.loop(t));
  }

  spawn() {
    const names = Object.keys(Blockfall.KINDS);
    const name = names[Math.floor(Math.random() * names.length)];
    const kind = Blockfall.KINDS[name];
    const cells = kind.cells.split(" ").map((p) => p.split(",").map(Number));
    const top = Math.min(...cells.map(([, y]) => y));
    this.piece = { kind, cells, x: kind.n === 2 ? 4 : 3, y: -top };
    if (!this.free(this.piece)) this.dead = true;
  }

  abs(p) {
    return p.cells.map(([x, y]) => [p.x + x, p.y + y]);
  }

  free(p) {
    return this.abs(p).every(
      ([x, y]) => x >= 0 && x < Blockfall.COLS && y < Blockfall.ROWS && !this.filled.has(`${x},${y}`)
    );
  }

  attempt(change) {
    const next = { ...this.piece, ...change };
    if (!this.free(next)) return false;
    this.piece = next;
    return true;
  }

  settle() {
    for (const [x, y] of this.abs(this.piece)) {
      if (y < 0) {
        this.dead = true;
        return;
      }
      this.filled.set(`${x},${y}`, this.piece.kind.color);
    }
    const counts = new Array(Blockfall.ROWS).fill(0);
    for (const key of this.filled.keys()) counts[Number(key.split(",")[1])]++;
    const full = counts.map((n, y) => (n === Blockfall.COLS ? y : -1)).filter((y) => y >= 0);
    if (full.length) {
      const moved = new Map();
      for (const [key, color] of this.filled) {
        const [x, y] = key.split(",").map(Number);
        if (full.includes(y)) continue;
        const drop = full.filter((fy) => fy > y).length;
        moved.set(`${x},${y + drop}`, color);
      }
      this.filled = moved;
      this.score += [0, 100, 300, 500, 800][full.length];
    }
    this.spawn();
  }

  onKey(e) {
    const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " "];
    if (!keys.includes(e.key)) return;
    e.preventDefault();
    if (this.dead) return;
    const p = this.piece;
    if (e.key === "ArrowLeft") this.attempt({ x: p.x - 1 });
    if (e.key === "ArrowRight") this.attempt({ x: p.x + 1 });
    if (e.key === "ArrowUp") {
      const n = p.kind.n;
      this.attempt({ cells: p.cells.map(([x, y]) => [n - 1 - y, x]) });
    }
    if (e.key === "ArrowDown") {
      if (this.attempt({ y: p.y + 1 })) {
        this.score += 1;
        this.elapsed = 0;
      } else {
        this.settle();
      }
    }
    if (e.key === " ") {
      while (this.attempt({ y: this.piece.y + 1 })) this.score += 2;
      this.settle();
    }
  }

  loop(now) {
    if (this.prev !== null && !this.dead) {
      this.elapsed += now - this.prev;
      while (this.elapsed >= this.gravity && !this.dead) {
        this.elapsed -= this.gravity;
        if (!this.attempt({ y: this.piece.y + 1 })) this.settle();
      }
    }
    this.prev = now;
    this.render();
    requestAnimationFrame((t) => this.loop(t));
  }

  render() {
    const S = Blockfall.SIZE;
    const html = [];
    const block = (x, y, color) =>
      `<div class="b" style="left:${x * S}px;top:${y * S}px;background:${color}"></div>`;
    for (const [key, color] of this.filled) {
      const [x, y] = key.split(",");
      html.push(block(x, y, color));
    }
    if (!this.dead) {
      for (const [x, y] of this.abs(this.piece)) if (y >= 0) html.push(block(x, y, this.piece.kind.color));
    } else {
      html.push('<div class="over">GAME OVER</div>');
    }
    this.pit.innerHTML = html.join("");
    this.scoreEl.textContent = this.score;
  }
}

new Blockfall(document.getElementById("pit"), document.getElementById("big"));
