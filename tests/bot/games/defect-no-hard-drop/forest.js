// Class with private fields; board = 20 Int8Array rows; 200 SVG rects whose fill-opacity toggles.
// Gravity: setInterval(450). Keys: arrows move / soft drop, Up rotates, Enter starts.
// DEFECT: there is no hard drop at all (Space and every other key do nothing); only soft drop.
class Forest {
  static COLORS = ["", "#74c69d", "#ffb703", "#bc6c25", "#dda15e", "#e76f51", "#a7c957", "#f4a261"];
  static SHAPES = [
    null,
    [[0, 1], [1, 1], [2, 1], [3, 1]],
    [[0, 0], [1, 0], [0, 1], [1, 1]],
    [[1, 0], [0, 1], [1, 1], [2, 1]],
    [[1, 0], [2, 0], [0, 1], [1, 1]],
    [[0, 0], [1, 0], [1, 1], [2, 1]],
    [[0, 0], [0, 1], [1, 1], [2, 1]],
    [[2, 0], [0, 1], [1, 1], [2, 1]],
  ];
  #rows = [];
  #piece = null;
  #score = 0;
  #status = "idle";
  #timer = 0;
  #rects = [];

  constructor() {
    const group = document.getElementById("cells");
    for (let i = 0; i < 200; i++) {
      const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      r.setAttribute("x", (i % 10) * 25 + 1);
      r.setAttribute("y", Math.floor(i / 10) * 25 + 1);
      r.setAttribute("width", 23);
      r.setAttribute("height", 23);
      r.setAttribute("fill-opacity", 0);
      group.appendChild(r);
      this.#rects.push(r);
    }
    this.banner = document.getElementById("banner");
    this.bannerText = document.getElementById("bannerText");
    this.out = document.getElementById("score");
    document.addEventListener("keydown", (e) => this.#onKey(e));
  }

  #begin() {
    this.#rows = Array.from({ length: 20 }, () => new Int8Array(10));
    this.#score = 0;
    this.#status = "run";
    this.banner.setAttribute("display", "none");
    this.#next();
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.#gravity(), 450);
    this.#draw();
  }

  #next() {
    const id = 1 + Math.floor(Math.random() * 7);
    const cells = Forest.SHAPES[id].map(([x, y]) => [x, y]);
    const dy = -Math.min(...cells.map(([, y]) => y));
    this.#piece = { id, cells, x: id === 2 ? 4 : 3, y: dy };
    if (!this.#fits(this.#piece.cells, this.#piece.x, this.#piece.y)) this.#gameOver();
  }

  #fits(cells, px, py) {
    for (const [cx, cy] of cells) {
      const x = px + cx;
      const y = py + cy;
      if (x < 0 || x > 9 || y > 19) return false;
      if (y >= 0 && this.#rows[y][x]) return false;
    }
    return true;
  }

  #shift(dx, dy) {
    const p = this.#piece;
    if (!this.#fits(p.cells, p.x + dx, p.y + dy)) return false;
    p.x += dx;
    p.y += dy;
    return true;
  }

  #rotate() {
    const p = this.#piece;
    if (p.id === 2) return;
    const n = p.id === 1 ? 4 : 3;
    const cells = p.cells.map(([x, y]) => [n - 1 - y, x]);
    if (this.#fits(cells, p.x, p.y)) p.cells = cells;
  }

  #land() {
    const p = this.#piece;
    for (const [cx, cy] of p.cells) {
      if (p.y + cy < 0) return this.#gameOver();
      this.#rows[p.y + cy][p.x + cx] = p.id;
    }
    const keep = this.#rows.filter((row) => row.includes(0));
    const lines = 20 - keep.length;
    while (keep.length < 20) keep.unshift(new Int8Array(10));
    this.#rows = keep;
    this.#score += lines * 150;
    this.#next();
  }

  #gravity() {
    if (this.#status !== "run") return;
    if (!this.#shift(0, 1)) this.#land();
    this.#draw();
  }

  #gameOver() {
    this.#status = "over";
    clearInterval(this.#timer);
    this.bannerText.textContent = "GAME OVER";
    this.banner.removeAttribute("display");
  }

  #onKey(e) {
    if (e.key.startsWith("Arrow")) e.preventDefault();
    if (e.key === "Enter") {
      if (this.#status !== "run") this.#begin();
      return;
    }
    if (this.#status !== "run") return;
    switch (e.key) {
      case "ArrowLeft": this.#shift(-1, 0); break;
      case "ArrowRight": this.#shift(1, 0); break;
      case "ArrowUp": this.#rotate(); break;
      case "ArrowDown":
        if (this.#shift(0, 1)) this.#score += 1;
        else this.#land();
        break;
      default: return;
    }
    this.#draw();
  }

  #draw() {
    const p = this.#piece;
    const live = new Map();
    if (this.#status === "run") for (const [cx, cy] of p.cells) live.set((p.y + cy) * 10 + p.x + cx, p.id);
    this.#rects.forEach((r, i) => {
      const id = live.get(i) || this.#rows[Math.floor(i / 10)][i % 10];
      r.setAttribute("fill", id ? Forest.COLORS[id] : "#1b4332");
      r.setAttribute("fill-opacity", id ? 1 : 0);
    });
    this.out.value = this.#score;
  }
}

new Forest();
