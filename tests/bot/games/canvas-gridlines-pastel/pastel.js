// Module-pattern engine: pieces are 16-bit masks (4 rotations each), the board is an array of
// rows of palette indices, gravity is a setTimeout chain, drawing happens only on change.
const Pastel = (function () {
  const NX = 10, NY = 20, S = 30, OX = 50, OY = 60;
  const TYPES = [
    { name: "I", masks: [0x0f00, 0x2222, 0x00f0, 0x4444], color: "#a8d8ea" },
    { name: "J", masks: [0x44c0, 0x8e00, 0x6440, 0x0e20], color: "#aa96da" },
    { name: "L", masks: [0x4460, 0x0e80, 0xc440, 0x2e00], color: "#fcbad3" },
    { name: "O", masks: [0xcc00, 0xcc00, 0xcc00, 0xcc00], color: "#fff09a" },
    { name: "S", masks: [0x06c0, 0x8c40, 0x6c00, 0x4620], color: "#b5ead7" },
    { name: "T", masks: [0x0e40, 0x4c40, 0x4e00, 0x4640], color: "#c7ceea" },
    { name: "Z", masks: [0x0c60, 0x4c80, 0xc600, 0x2640], color: "#ffdac1" },
  ];
  const canvas = document.getElementById("c");
  const ctx = canvas.getContext("2d");
  const overlay = document.getElementById("overlay");
  const pts = document.getElementById("pts");
  let rows, cur, score, mode = "ready", timer = 0;

  function eachBlock(type, dir, x, y, fn) {
    let row = 0, col = 0;
    const mask = type.masks[dir];
    for (let bit = 0x8000; bit > 0; bit >>= 1) {
      if (mask & bit) fn(x + col, y + row);
      if (++col === 4) { col = 0; row++; }
    }
  }
  function occupied(type, dir, x, y) {
    let hit = false;
    eachBlock(type, dir, x, y, (bx, by) => {
      if (bx < 0 || bx >= NX || by >= NY || (by >= 0 && rows[by][bx] >= 0)) hit = true;
    });
    return hit;
  }
  function firstRow(mask) {
    for (let r = 0; r < 4; r++) if ((mask >> (12 - 4 * r)) & 0xf) return r;
    return 0;
  }
  function spawn() {
    const type = TYPES[Math.floor(Math.random() * TYPES.length)];
    cur = { type, dir: 0, x: 3, y: -firstRow(type.masks[0]) };
    if (occupied(cur.type, cur.dir, cur.x, cur.y)) finish();
  }
  function tryMove(dx, dy, ddir) {
    const dir = (cur.dir + ddir) % 4;
    if (occupied(cur.type, dir, cur.x + dx, cur.y + dy)) return false;
    cur.x += dx; cur.y += dy; cur.dir = dir;
    return true;
  }
  function land() {
    let above = false;
    const idx = TYPES.indexOf(cur.type);
    eachBlock(cur.type, cur.dir, cur.x, cur.y, (bx, by) => {
      if (by < 0) above = true; else rows[by][bx] = idx;
    });
    if (above) return finish();
    rows = rows.filter((r) => r.some((v) => v < 0));
    const n = NY - rows.length;
    while (rows.length < NY) rows.unshift(new Array(NX).fill(-1));
    score += [0, 100, 250, 450, 800][n];
    spawn();
  }
  function step() {
    if (mode !== "play") return;
    if (!tryMove(0, 1, 0)) land();
    paint();
    if (mode === "play") timer = setTimeout(step, 650);
  }
  function finish() {
    mode = "over";
    clearTimeout(timer);
    overlay.innerHTML = "Game Over<br><small>press Enter to play again</small>";
    overlay.classList.remove("hidden");
  }
  function begin() {
    rows = [];
    for (let y = 0; y < NY; y++) rows.push(new Array(NX).fill(-1));
    score = 0;
    mode = "play";
    overlay.classList.add("hidden");
    spawn();
    paint();
    clearTimeout(timer);
    timer = setTimeout(step, 650);
  }
  function box(x, y, color) {
    ctx.fillStyle = color;
    ctx.fillRect(OX + x * S + 2, OY + y * S + 2, S - 3, S - 3);
    ctx.strokeStyle = "rgba(120, 100, 140, 0.35)";
    ctx.strokeRect(OX + x * S + 2.5, OY + y * S + 2.5, S - 4, S - 4);
  }
  function paint() {
    ctx.fillStyle = "#f6e7f0";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = "#8a6fa3";
    ctx.font = "italic 26px Georgia, serif";
    ctx.textAlign = "center";
    ctx.fillText("pastel blocks", canvas.width / 2, 38);
    // frame
    ctx.fillStyle = "#d8c3e6";
    ctx.fillRect(OX - 10, OY - 10, NX * S + 20, NY * S + 20);
    ctx.fillStyle = "#fffdf9";
    ctx.fillRect(OX, OY, NX * S, NY * S);
    ctx.strokeStyle = "#eadff0";
    ctx.lineWidth = 1;
    for (let x = 0; x <= NX; x++) {
      ctx.beginPath(); ctx.moveTo(OX + x * S + 0.5, OY); ctx.lineTo(OX + x * S + 0.5, OY + NY * S); ctx.stroke();
    }
    for (let y = 0; y <= NY; y++) {
      ctx.beginPath(); ctx.moveTo(OX, OY + y * S + 0.5); ctx.lineTo(OX + NX * S, OY + y * S + 0.5); ctx.stroke();
    }
    if (rows) {
      rows.forEach((r, y) => r.forEach((v, x) => { if (v >= 0) box(x, y, TYPES[v].color); }));
    }
    if (cur && mode === "play") {
      eachBlock(cur.type, cur.dir, cur.x, cur.y, (bx, by) => { if (by >= 0) box(bx, by, cur.type.color); });
    }
    pts.textContent = String(score || 0);
  }
  function onKey(e) {
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (k === "Enter") {
      if (mode !== "play") begin();
      return;
    }
    if (mode !== "play") return;
    if (k === "a") tryMove(-1, 0, 0);
    else if (k === "d") tryMove(1, 0, 0);
    else if (k === "w") tryMove(0, 0, 1);
    else if (k === "s") { if (tryMove(0, 1, 0)) score += 1; }
    else if (k === " ") {
      e.preventDefault();
      while (tryMove(0, 1, 0)) score += 2;
      land();
    } else return;
    paint();
  }
  return { paint, onKey };
})();

document.addEventListener("keydown", Pastel.onKey);
Pastel.paint();
