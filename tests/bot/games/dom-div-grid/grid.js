// Functional style: immutable-ish state object, board = array of 20 strings of 10 chars,
// pieces = string pictures, rendering by toggling classes on 200 pre-built <div>s.
(() => {
  const PICTURES = {
    I: ["....", "IIII", "....", "...."],
    O: ["OO", "OO"],
    T: [".T.", "TTT", "..."],
    S: [".SS", "SS.", "..."],
    Z: ["ZZ.", ".ZZ", "..."],
    J: ["J..", "JJJ", "..."],
    L: ["..L", "LLL", "..."],
  };
  const EMPTY_ROW = "..........";
  const well = document.getElementById("well");
  const scoreEl = document.getElementById("score");
  const msg = document.getElementById("msg");
  const playBtn = document.getElementById("play");
  const cells = [];
  for (let i = 0; i < 200; i++) {
    const div = document.createElement("div");
    div.className = "cell";
    well.appendChild(div);
    cells.push(div);
  }

  const turn = (pic) => pic[0].split("").map((_, c) => pic.map((row) => row[c]).reverse().join(""));
  const blocks = (p) =>
    p.pic.flatMap((row, r) => row.split("").flatMap((ch, c) => (ch === "." ? [] : [[p.x + c, p.y + r]])));
  const fits = (board, p) =>
    blocks(p).every(([x, y]) => x >= 0 && x < 10 && y < 20 && (y < 0 || board[y][x] === "."));
  const randomPiece = () => {
    const kind = "IOTSZJL"[Math.floor(Math.random() * 7)];
    const pic = PICTURES[kind];
    const top = pic.findIndex((row) => row.includes(kind));
    return { kind, pic, x: kind === "O" ? 4 : 3, y: -top };
  };
  const merge = (board, p) => {
    const rows = board.map((row) => row.split(""));
    for (const [x, y] of blocks(p)) if (y >= 0) rows[y][x] = p.kind;
    return rows.map((r) => r.join(""));
  };
  const clearRows = (board) => {
    const kept = board.filter((row) => row.includes("."));
    const n = 20 - kept.length;
    return { board: Array(n).fill(EMPTY_ROW).concat(kept), n };
  };

  let state = { board: Array(20).fill(EMPTY_ROW), piece: null, score: 0, phase: "idle" };
  let ticker = null;

  const lock = (s) => {
    if (blocks(s.piece).some(([, y]) => y < 0)) return { ...s, phase: "over" };
    const { board, n } = clearRows(merge(s.board, s.piece));
    const piece = randomPiece();
    const next = { ...s, board, piece, score: s.score + [0, 100, 300, 500, 800][n] };
    return fits(board, piece) ? next : { ...next, phase: "over" };
  };
  const moved = (s, dx, dy) => ({ ...s.piece, x: s.piece.x + dx, y: s.piece.y + dy });
  const fall = (s) => {
    const p = moved(s, 0, 1);
    return fits(s.board, p) ? { ...s, piece: p } : lock(s);
  };
  const act = (s, key) => {
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const p = moved(s, key === "ArrowLeft" ? -1 : 1, 0);
      return fits(s.board, p) ? { ...s, piece: p } : s;
    }
    if (key === "ArrowDown") {
      const p = moved(s, 0, 1);
      return fits(s.board, p) ? { ...s, piece: p, score: s.score + 1 } : lock(s);
    }
    if (key === "x") {
      const p = { ...s.piece, pic: turn(s.piece.pic) };
      return fits(s.board, p) ? { ...s, piece: p } : s;
    }
    if (key === " ") {
      let p = s.piece;
      let bonus = 0;
      while (fits(s.board, { ...p, y: p.y + 1 })) {
        p = { ...p, y: p.y + 1 };
        bonus += 2;
      }
      return lock({ ...s, piece: p, score: s.score + bonus });
    }
    return s;
  };

  const render = (s) => {
    const view = s.piece && s.phase === "play" ? merge(s.board, s.piece) : s.board;
    view.forEach((row, y) =>
      row.split("").forEach((ch, x) => {
        cells[y * 10 + x].className = ch === "." ? "cell" : "cell on " + ch;
      })
    );
    scoreEl.textContent = s.score;
  };

  const update = (s) => {
    const wasOver = state.phase === "over";
    state = s;
    render(state);
    if (state.phase === "over" && !wasOver) {
      clearInterval(ticker);
      msg.textContent = "Game Over";
      playBtn.disabled = false;
      setTimeout(() => alert("Game Over"), 100);
    }
  };

  playBtn.addEventListener("click", () => {
    playBtn.blur();
    playBtn.disabled = true;
    msg.textContent = "";
    clearInterval(ticker);
    update({ board: Array(20).fill(EMPTY_ROW), piece: randomPiece(), score: 0, phase: "play" });
    ticker = setInterval(() => state.phase === "play" && update(fall(state)), 600);
  });

  document.addEventListener("keydown", (e) => {
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " "].includes(key)) e.preventDefault();
    if (state.phase !== "play") return;
    update(act(state, key));
  });

  render(state);
})();
