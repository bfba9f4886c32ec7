// DEFECT: the script looks up a canvas that the page never creates ("#game" instead of a real
// element), so the very first statement throws a TypeError and nothing is ever rendered.
"use strict";
const COLS = 10;
const ROWS = 20;
const SIZE = 30;
const canvas = document.getElementById("game");
const ctx = canvas.getContext("2d"); // TypeError: Cannot read properties of null (reading 'getContext')
canvas.width = COLS * SIZE;
canvas.height = ROWS * SIZE;
const board = Array.from({ length: ROWS }, () => new Array(COLS).fill(0));

function draw() {
  ctx.fillStyle = "#000";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  board.forEach((row, y) =>
    row.forEach((v, x) => {
      if (v) {
        ctx.fillStyle = "#0f0";
        ctx.fillRect(x * SIZE, y * SIZE, SIZE - 1, SIZE - 1);
      }
    })
  );
  requestAnimationFrame(draw);
}
document.getElementById("app").textContent = "";
draw();
