// 落块: a falling-block game on one canvas. Blocks are filled paths, the well is one
// stroked path, empty cells are never drawn. Keys are not kept from scrolling the page.
"use strict";

const COLS = 10, ROWS = 20, CELL = 18;
const WELL_X = 150, WELL_Y = 20;          // the well's top-left corner on the 480x400 canvas
const BACKGROUND = "#fbf3e4", INK = "#3b3128";
const GRAVITY_MS = 600;

// [colour, size of the turning box, cells as [x, y] inside the box]
const SHAPES = [
  ["#2aa1b3", 4, [[0, 1], [1, 1], [2, 1], [3, 1]]], // I
  ["#d9a400", 2, [[0, 0], [1, 0], [0, 1], [1, 1]]], // O
  ["#8e5cc2", 3, [[1, 0], [0, 1], [1, 1], [2, 1]]], // T
  ["#3f9e4d", 3, [[1, 0], [2, 0], [0, 1], [1, 1]]], // S
  ["#cf4b3c", 3, [[0, 0], [1, 0], [1, 1], [2, 1]]], // Z
  ["#3a64c8", 3, [[0, 0], [0, 1], [1, 1], [2, 1]]], // J
  ["#e07b24", 3, [[2, 0], [0, 1], [1, 1], [2, 1]]], // L
];

const canvas = document.getElementById("board");
const ctx = canvas.getContext("2d");

let well = [];          // well[y][x]: a colour, or null for an empty cell
let piece = null;       // { colour, size, cells, x, y }
let score = 0;
let playing = false;
let finished = false;
let gravityTimer = null;

function emptyWell() {
  return Array.from({ length: ROWS }, () => new Array(COLS).fill(null));
}

function fits(cells, x, y) {
  for (const [cx, cy] of cells) {
    const col = x + cx, row = y + cy;
    if (col < 0 || col >= COLS || row >= ROWS) return false;
    if (row >= 0 && well[row][col]) return false;
  }
  return true;
}

function newPiece() {
  const [colour, size, cells] = SHAPES[Math.floor(Math.random() * SHAPES.length)];
  const next = { colour, size, cells, x: Math.floor((COLS - size) / 2), y: 0 };
  if (!fits(next.cells, next.x, next.y)) {
    // no room for the next piece: the game is over and nothing spawns any more
    piece = null;
    playing = false;
    finished = true;
    clearInterval(gravityTimer);
    return;
  }
  piece = next;
}

function settle() {
  for (const [cx, cy] of piece.cells) {
    if (piece.y + cy >= 0) well[piece.y + cy][piece.x + cx] = piece.colour;
  }
  let cleared = 0;
  for (let row = ROWS - 1; row >= 0; row--) {
    if (well[row].every(Boolean)) {
      well.splice(row, 1);                      // rows above move down by one
      well.unshift(new Array(COLS).fill(null));
      cleared++;
      row++;                                    // look at the same row index again
    }
  }
  score += 10 * cleared;
  newPiece();
}

function shift(dx, dy) {
  if (!piece || !fits(piece.cells, piece.x + dx, piece.y + dy)) return false;
  piece.x += dx;
  piece.y += dy;
  return true;
}

function turn() {
  if (!piece) return;
  const n = piece.size;
  const turned = piece.cells.map(([x, y]) => [n - 1 - y, x]); // clockwise in the box
  for (const kick of [0, -1, 1, -2, 2]) {
    if (fits(turned, piece.x + kick, piece.y)) {
      piece.cells = turned;
      piece.x += kick;
      return;
    }
  }
}

function fall() {
  if (!playing) return;
  if (!shift(0, 1)) settle();
}

function softDrop() {
  if (shift(0, 1)) score += 1;
  else settle();
}

function hardDrop() {
  while (shift(0, 1)) score += 2;
  settle();
}

function block(col, row, colour) {
  // one filled path per block: moveTo, three lineTo, closePath
  const x = WELL_X + col * CELL, y = WELL_Y + row * CELL;
  ctx.fillStyle = colour;
  ctx.beginPath();
  ctx.moveTo(x + 1, y + 1);
  ctx.lineTo(x + CELL - 1, y + 1);
  ctx.lineTo(x + CELL - 1, y + CELL - 1);
  ctx.lineTo(x + 1, y + CELL - 1);
  ctx.closePath();
  ctx.fill();
}

function draw() {
  ctx.fillStyle = BACKGROUND;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  // the well: left side, bottom and right side as one open path
  ctx.strokeStyle = INK;
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(WELL_X - 1, WELL_Y);
  ctx.lineTo(WELL_X - 1, WELL_Y + ROWS * CELL + 1);
  ctx.lineTo(WELL_X + COLS * CELL + 1, WELL_Y + ROWS * CELL + 1);
  ctx.lineTo(WELL_X + COLS * CELL + 1, WELL_Y);
  ctx.stroke();
  for (let row = 0; row < ROWS; row++) {
    for (let col = 0; col < COLS; col++) if (well[row][col]) block(col, row, well[row][col]);
  }
  if (piece) {
    for (const [cx, cy] of piece.cells) {
      if (piece.y + cy >= 0) block(piece.x + cx, piece.y + cy, piece.colour);
    }
  }
  ctx.fillStyle = INK;
  ctx.font = "20px sans-serif";
  ctx.fillText("分数 " + score, 16, 48);
  if (finished) {
    ctx.font = "24px sans-serif";
    ctx.fillText("游戏结束", 350, 200);
  }
  requestAnimationFrame(draw);
}

function begin() {
  well = emptyWell();
  score = 0;
  finished = false;
  playing = true;
  newPiece();
  clearInterval(gravityTimer);
  gravityTimer = setInterval(fall, GRAVITY_MS);
}

well = emptyWell();
requestAnimationFrame(draw);

// The title card: its button only shows the game screen; the game waits for 开始.
document.getElementById("enter").addEventListener("click", () => {
  document.getElementById("title").hidden = true;
  document.getElementById("game").hidden = false;
});
document.getElementById("start").addEventListener("click", (event) => {
  event.currentTarget.blur();
  begin();
});

// No preventDefault: the arrows and Space also scroll a page taller than the window.
document.addEventListener("keydown", (event) => {
  if (!playing) return;
  switch (event.key) {
    case "ArrowLeft": shift(-1, 0); break;
    case "ArrowRight": shift(1, 0); break;
    case "ArrowDown": softDrop(); break;
    case "ArrowUp": turn(); break;
    case " ": hardDrop(); break;
  }
});
