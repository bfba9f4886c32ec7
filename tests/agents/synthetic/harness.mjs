// Drives a generated game's pure modules (game.js, input.js) in Node, without a browser,
// and prints one JSON object of measurements the Python tests assert on.
// Usage: node harness.mjs DIR   (DIR holds game.js and input.js: src/ or dist/)
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const dir = process.argv[2];
const game = await import(pathToFileURL(join(dir, "game.js")).href);
const input = await import(pathToFileURL(join(dir, "input.js")).href);

const O_KIND = 2; // SHAPES order: I, O, T, S, Z, J, L
const cellsOf = (piece) =>
  piece.shape.flatMap((line, r) =>
    line.flatMap((v, c) => (v ? [{ row: piece.row + r, col: piece.col + c }] : [])),
  );
const filled = (board) => board.flat().filter((v) => v !== 0).length;

function started() {
  const state = game.createGame();
  game.update(state, ["start"], 0);
  return state;
}

function gravity() {
  const state = started();
  const row = state.piece.row;
  for (let i = 0; i < 125; i += 1) game.update(state, [], 16); // 2 s of frames
  return state.piece.row - row;
}

function rotate() {
  const state = started();
  if (state.piece.kind === O_KIND) game.update(state, ["hardDrop"], 0);
  const before = JSON.stringify(state.piece.shape);
  game.update(state, ["rotate"], 0);
  return JSON.stringify(state.piece.shape) !== before;
}

function hardDrop() {
  const state = started();
  const before = filled(state.board);
  const first = state.piece;
  game.update(state, ["hardDrop"], 0);
  return { locked: filled(state.board) - before, newPiece: state.piece !== first && state.piece.row <= 0 };
}

function walls() {
  const state = started();
  for (let i = 0; i < 12; i += 1) game.update(state, ["left"], 0);
  const left = Math.min(...cellsOf(state.piece).map((c) => c.col));
  for (let i = 0; i < 24; i += 1) game.update(state, ["right"], 0);
  const right = Math.max(...cellsOf(state.piece).map((c) => c.col));
  return { left, right };
}

function lineClear() {
  const state = started();
  state.board[state.board.length - 1] = new Array(10).fill(1);
  game.update(state, ["hardDrop"], 0);
  const bottomFull = state.board[state.board.length - 1].every((v) => v !== 0);
  return { lines: state.lines, bottomFull, score: state.score };
}

function gameOver() {
  const state = started();
  for (let drops = 1; drops <= 300; drops += 1) {
    game.update(state, ["hardDrop"], 0);
    if (state.phase === "over") return { over: true, drops, piece: state.piece };
  }
  return { over: false, drops: 300, phase: state.phase };
}

function crash() {
  const state = started();
  try {
    for (let i = 0; i < 400; i += 1) game.update(state, [], 100); // 40 s of play
  } catch (error) {
    return { thrown: String(error), atMs: state.playMs };
  }
  return { thrown: null, atMs: state.playMs };
}

function keys() {
  const target = new EventTarget();
  const queue = input.createInput(target);
  const result = {};
  for (const key of ["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp", " ", "a", "A", "d", "D", "s", "w", "W", "x", "X", "z", "Enter"]) {
    const event = new Event("keydown", { cancelable: true });
    event.key = key;
    target.dispatchEvent(event);
    const actions = queue.drain();
    result[key] = actions.length ? actions[0] : null;
  }
  return result;
}

// A long scripted session (pseudo-random inputs, game overs restarted): a fingerprint of
// every state along the way, to show two builds play exactly the same game.
function trace() {
  const state = game.createGame();
  const choices = [[], [], ["left"], ["right"], ["rotate"], ["softDrop"], ["hardDrop"], ["left", "left"], ["start"]];
  let seed = 7;
  let hash = 0;
  let cleared = 0;
  let games = 0;
  for (let step = 0; step < 4000; step += 1) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    if (step % 150 === 0) {
      // A full bottom row goes at the next lock: line clears are part of the fingerprint.
      state.board[state.board.length - 1] = new Array(10).fill(1);
    }
    const [lines, phase] = [state.lines, state.phase];
    game.update(state, choices[seed % choices.length], 40);
    cleared += Math.max(0, state.lines - lines);
    games += phase !== "playing" && state.phase === "playing" ? 1 : 0;
    const text = JSON.stringify([state.board, state.piece, state.score, state.lines, state.phase]);
    for (let i = 0; i < text.length; i += 1) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) >>> 0;
  }
  return { hash, cleared, games };
}

const run = (f) => {
  try {
    return f();
  } catch (error) {
    return { error: String(error) };
  }
};
console.log(
  JSON.stringify({
    gravity: run(gravity),
    rotate: run(rotate),
    hardDrop: run(hardDrop),
    walls: run(walls),
    lineClear: run(lineClear),
    gameOver: run(gameOver),
    crash: run(crash),
    keys: run(keys),
    trace: run(trace),
  }),
);
