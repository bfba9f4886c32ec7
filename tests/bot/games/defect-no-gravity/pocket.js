// Object-literal engine, four-shade green palette, render every animation frame (no accumulator).
// DEFECT: the gravity timer fires but moves the piece by 0 rows, so pieces never fall on their own.
const T = {
  cols: 10,
  rows: 20,
  px: 25,
  interval: 800,
  shades: ["#9bbc0f", "#8bac0f", "#306230", "#0f380f"],
  shapes: [
    { m: [[1, 1, 1, 1]], shade: 3 },
    { m: [[1, 1], [1, 1]], shade: 2 },
    { m: [[0, 1, 0], [1, 1, 1]], shade: 3 },
    { m: [[0, 1, 1], [1, 1, 0]], shade: 2 },
    { m: [[1, 1, 0], [0, 1, 1]], shade: 3 },
    { m: [[1, 0, 0], [1, 1, 1]], shade: 2 },
    { m: [[0, 0, 1], [1, 1, 1]], shade: 3 },
  ],
  well: null,
  p: null,
  score: 0,
  over: false,
  last: 0,

  init() {
    this.ctx = document.getElementById("lcd").getContext("2d");
    this.scoreEl = document.getElementById("score");
    this.stateEl = document.getElementById("state");
    this.well = Array.from({ length: this.rows }, () => Array(this.cols).fill(0));
    this.next();
    document.addEventListener("keydown", (e) => this.key(e));
    requestAnimationFrame((t) => this.tick(t));
  },
  next() {
    const s = this.shapes[Math.floor(Math.random() * this.shapes.length)];
    this.p = { m: s.m, shade: s.shade, x: Math.floor((this.cols - s.m[0].length) / 2), y: 0 };
    if (this.hit(this.p.m, this.p.x, this.p.y)) {
      this.over = true;
      this.stateEl.textContent = "GAME OVER";
    }
  },
  hit(m, x, y) {
    return m.some((row, r) =>
      row.some((v, c) => v && (x + c < 0 || x + c >= this.cols || y + r >= this.rows || this.well[y + r][x + c]))
    );
  },
  tryMove(dx, dy) {
    if (this.hit(this.p.m, this.p.x + dx, this.p.y + dy)) return false;
    this.p.x += dx;
    this.p.y += dy;
    return true;
  },
  spin() {
    const m = this.p.m;
    const turned = m[0].map((_, c) => m.map((row) => row[c]).reverse());
    if (!this.hit(turned, this.p.x, this.p.y)) this.p.m = turned;
  },
  place() {
    this.p.m.forEach((row, r) =>
      row.forEach((v, c) => {
        if (v) this.well[this.p.y + r][this.p.x + c] = this.p.shade;
      })
    );
    const before = this.well.length;
    this.well = this.well.filter((row) => row.includes(0));
    const cleared = before - this.well.length;
    while (this.well.length < this.rows) this.well.unshift(Array(this.cols).fill(0));
    this.score += cleared * cleared * 100;
    this.next();
  },
  key(e) {
    if (!["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "].includes(e.key)) return;
    e.preventDefault();
    if (this.over) return;
    switch (e.key) {
      case "ArrowLeft":
        this.tryMove(-1, 0);
        break;
      case "ArrowRight":
        this.tryMove(1, 0);
        break;
      case "ArrowUp":
        this.spin();
        break;
      case "ArrowDown":
        if (this.tryMove(0, 1)) this.score += 1;
        else this.place();
        break;
      case " ":
        while (this.tryMove(0, 1)) this.score += 2;
        this.place();
        break;
    }
  },
  tick(now) {
    if (!this.over && now - this.last > this.interval) {
      this.last = now;
      this.tryMove(0, 0); // BUG: should be tryMove(0, 1) and place() when blocked
    }
    this.draw();
    requestAnimationFrame((t) => this.tick(t));
  },
  draw() {
    const { ctx, px } = this;
    ctx.fillStyle = this.shades[0];
    ctx.fillRect(0, 0, this.cols * px, this.rows * px);
    const square = (x, y, shade) => {
      ctx.fillStyle = this.shades[shade];
      ctx.fillRect(x * px + 1, y * px + 1, px - 2, px - 2);
      ctx.strokeStyle = this.shades[1];
      ctx.lineWidth = 2;
      ctx.strokeRect(x * px + 5, y * px + 5, px - 10, px - 10);
    };
    this.well.forEach((row, y) => row.forEach((v, x) => v && square(x, y, v)));
    if (!this.over) this.p.m.forEach((row, r) => row.forEach((v, c) => v && square(this.p.x + c, this.p.y + r, this.p.shade)));
    if (this.over) {
      ctx.fillStyle = this.shades[3];
      ctx.fillRect(0, 220, this.cols * px, 60);
      ctx.fillStyle = this.shades[0];
      ctx.font = "bold 28px 'Lucida Console', monospace";
      ctx.textAlign = "center";
      ctx.fillText("GAME OVER", (this.cols * px) / 2, 260);
    }
    this.scoreEl.textContent = this.score;
  },
};

T.init();
