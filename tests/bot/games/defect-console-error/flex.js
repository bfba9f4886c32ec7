// Reducer architecture: state = reduce(state, action); a requestAnimationFrame loop dispatches a
// "gravity" action whenever a 750 ms deadline passes; 200 <span>s in a flex-wrap container.
// DEFECT: a fake analytics hook calls console.error once, ~4 s after the page starts.
const HUES = { I: "#15aabf", O: "#fab005", T: "#be4bdb", S: "#40c057", Z: "#fa5252", J: "#4c6ef5", L: "#fd7e14" };
const SHAPE = {
  I: ["0000", "1111", "0000", "0000"],
  O: ["11", "11"],
  T: ["010", "111", "000"],
  S: ["011", "110", "000"],
  Z: ["110", "011", "000"],
  J: ["100", "111", "000"],
  L: ["001", "111", "000"],
};
const GRAVITY_MS = 750;

const host = document.getElementById("tiles");
const tiles = Array.from({ length: 200 }, () => host.appendChild(document.createElement("span")));
const scoreOut = document.getElementById("score");
const overOut = document.getElementById("gameover");

function grid(m) {
  return m.map((row) => row.split("").map(Number));
}
function turn(m) {
  return m.map((_, r) => m.map((row) => row[r]).reverse());
}
function spawnPiece(board) {
  const kind = "IOTSZJL"[Math.floor(Math.random() * 7)];
  const m = grid(SHAPE[kind]);
  const firstRow = m.findIndex((row) => row.includes(1));
  return { kind, m, x: kind === "O" ? 4 : 3, y: -firstRow };
}
function collide(board, p) {
  for (let r = 0; r < p.m.length; r++) {
    for (let c = 0; c < p.m.length; c++) {
      if (!p.m[r][c]) continue;
      const x = p.x + c, y = p.y + r;
      if (x < 0 || x > 9 || y > 19) return true;
      if (y >= 0 && board[y][x]) return true;
    }
  }
  return false;
}
function lockIn(state) {
  const board = state.board.map((row) => row.slice());
  const p = state.piece;
  for (let r = 0; r < p.m.length; r++) {
    for (let c = 0; c < p.m.length; c++) {
      if (!p.m[r][c]) continue;
      if (p.y + r < 0) return { ...state, over: true };
      board[p.y + r][p.x + c] = p.kind;
    }
  }
  const rest = board.filter((row) => row.some((v) => !v));
  const lines = 20 - rest.length;
  const fresh = Array.from({ length: lines }, () => Array(10).fill(null)).concat(rest);
  const piece = spawnPiece(fresh);
  return {
    ...state,
    board: fresh,
    piece,
    score: state.score + [0, 100, 300, 500, 800][lines],
    over: collide(fresh, piece),
  };
}
function reduce(state, action) {
  if (state.over) return state;
  const p = state.piece;
  const attempt = (q) => (collide(state.board, q) ? null : { ...state, piece: q });
  switch (action) {
    case "left":
      return attempt({ ...p, x: p.x - 1 }) || state;
    case "right":
      return attempt({ ...p, x: p.x + 1 }) || state;
    case "rotate":
      return attempt({ ...p, m: turn(p.m) }) || state;
    case "soft": {
      const s = attempt({ ...p, y: p.y + 1 });
      return s ? { ...s, score: s.score + 1 } : lockIn(state);
    }
    case "gravity":
      return attempt({ ...p, y: p.y + 1 }) || lockIn(state);
    case "hard": {
      let q = p;
      let bonus = 0;
      while (!collide(state.board, { ...q, y: q.y + 1 })) {
        q = { ...q, y: q.y + 1 };
        bonus += 2;
      }
      return lockIn({ ...state, piece: q, score: state.score + bonus });
    }
    default:
      return state;
  }
}
function view(state) {
  const board = state.board.map((row) => row.slice());
  const p = state.piece;
  if (!state.over) {
    p.m.forEach((row, r) => row.forEach((v, c) => {
      if (v && p.y + r >= 0) board[p.y + r][p.x + c] = p.kind;
    }));
  }
  board.flat().forEach((k, i) => {
    tiles[i].style.background = k ? HUES[k] : "";
    tiles[i].className = k ? "full" : "";
  });
  scoreOut.textContent = state.score;
  overOut.textContent = state.over ? "Game Over" : "";
}

const empty = Array.from({ length: 20 }, () => Array(10).fill(null));
let state = { board: empty, piece: spawnPiece(empty), score: 0, over: false };
let due = performance.now() + GRAVITY_MS;
const KEYMAP = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "rotate", ArrowDown: "soft", " ": "hard" };

document.addEventListener("keydown", (e) => {
  const action = KEYMAP[e.key];
  if (!action) return;
  e.preventDefault();
  state = reduce(state, action);
  if (action === "soft") due = performance.now() + GRAVITY_MS;
});

function frame(now) {
  if (now >= due) {
    due = now + GRAVITY_MS;
    state = reduce(state, "gravity");
  }
  view(state);
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

setTimeout(() => {
  console.error("[analytics] beacon failed: endpoint not configured");
}, 4000);
