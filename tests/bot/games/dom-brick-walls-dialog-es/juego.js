// Ladrillos: a falling-block game in a CSS grid of 240 divs, of which the top 4 rows are
// never displayed. Pieces appear in those hidden rows; Space turns; there is no hard drop.
"use strict";

const ANCHO = 10, ALTO = 24, OCULTAS = 4; // 24 rows in the model, 20 on screen
const CAIDA_MS = 550;
const BLOQUES = {
  I: ["....", "####", "....", "...."],
  O: ["##", "##"],
  T: [".#.", "###", "..."],
  S: [".##", "##.", "..."],
  Z: ["##.", ".##", "..."],
  J: ["#..", "###", "..."],
  L: ["..#", "###", "..."],
};
const TIPOS = Object.keys(BLOQUES);

class Juego {
  constructor(alCambiar) {
    this.alCambiar = alCambiar;
    this.celdas = new Array(ANCHO * ALTO).fill("");
    this.pieza = null;
    this.puntos = 0;
    this.enMarcha = false;
    this.terminado = false;
  }

  static forma(tipo) {
    return BLOQUES[tipo].map((fila) => [...fila].map((c) => c === "#"));
  }

  static girar(forma) {
    // clockwise: the new row r is the old column r read from the bottom up
    const n = forma.length;
    return forma.map((_, r) => forma.map((__, c) => forma[n - 1 - c][r]));
  }

  cabe(forma, fila, col) {
    return forma.every((linea, r) => linea.every((lleno, c) => {
      if (!lleno) return true;
      const y = fila + r, x = col + c;
      return x >= 0 && x < ANCHO && y >= 0 && y < ALTO && !this.celdas[y * ANCHO + x];
    }));
  }

  empezar() {
    this.celdas.fill("");
    this.puntos = 0;
    this.terminado = false;
    this.enMarcha = true;
    this.nueva();
    this.alCambiar();
  }

  nueva() {
    const tipo = TIPOS[Math.floor(Math.random() * TIPOS.length)];
    const forma = Juego.forma(tipo);
    const arriba = forma.findIndex((linea) => linea.some(Boolean));
    // the topmost cells start on model row 2: hidden until the piece has fallen two rows
    const pieza = { tipo, forma, fila: 2 - arriba, col: Math.floor((ANCHO - forma.length) / 2) };
    if (!this.cabe(pieza.forma, pieza.fila, pieza.col)) return this.acabar();
    this.pieza = pieza;
  }

  acabar() {
    this.pieza = null;
    this.enMarcha = false;
    this.terminado = true;
  }

  fijar() {
    const p = this.pieza;
    p.forma.forEach((linea, r) => linea.forEach((lleno, c) => {
      if (lleno) this.celdas[(p.fila + r) * ANCHO + p.col + c] = p.tipo;
    }));
    this.pieza = null;
    let lineas = 0;
    for (let y = ALTO - 1; y >= 0; y--) {
      const fila = this.celdas.slice(y * ANCHO, (y + 1) * ANCHO);
      if (fila.every(Boolean)) {
        // drop every row above by one, then look at this row again
        this.celdas.copyWithin(ANCHO, 0, y * ANCHO);
        this.celdas.fill("", 0, ANCHO);
        lineas++;
        y++;
      }
    }
    this.puntos += 10 * lineas;
    // a block left above the visible field (in the hidden rows) tops the game out
    if (this.celdas.slice(0, OCULTAS * ANCHO).some(Boolean)) return this.acabar();
    this.nueva();
  }

  mover(dx, dy) {
    const p = this.pieza;
    if (!this.enMarcha || !p || !this.cabe(p.forma, p.fila + dy, p.col + dx)) return false;
    p.fila += dy;
    p.col += dx;
    return true;
  }

  caer() {
    if (!this.enMarcha) return;
    if (!this.mover(0, 1)) this.fijar();
    this.alCambiar();
  }

  bajar() {
    if (!this.enMarcha) return;
    if (this.mover(0, 1)) this.puntos += 1;
    else this.fijar();
    this.alCambiar();
  }

  lado(dx) {
    if (this.mover(dx, 0)) this.alCambiar();
  }

  rotar() {
    const p = this.pieza;
    if (!this.enMarcha || !p) return;
    const forma = Juego.girar(p.forma);
    for (const empuje of [0, -1, 1, -2, 2]) {
      if (this.cabe(forma, p.fila, p.col + empuje)) {
        p.forma = forma;
        p.col += empuje;
        this.alCambiar();
        return;
      }
    }
  }

  vista() {
    const v = this.celdas.slice();
    const p = this.pieza;
    if (p) p.forma.forEach((linea, r) => linea.forEach((lleno, c) => {
      if (lleno) v[(p.fila + r) * ANCHO + p.col + c] = p.tipo;
    }));
    return v;
  }
}

// ---- the page ----
const tablero = document.getElementById("tablero");
const divs = [];
for (let i = 0; i < ANCHO * ALTO; i++) {
  const d = document.createElement("div");
  if (i < OCULTAS * ANCHO) d.className = "oculta";
  tablero.appendChild(d);
  divs.push(d);
}
for (const id of ["muro-izq", "muro-der"]) {
  const muro = document.getElementById(id);
  for (let i = 0; i < 30; i++) {
    const b = document.createElement("div");
    b.className = "ladrillo";
    muro.appendChild(b);
  }
}

const puntos = document.getElementById("puntos");
const fin = document.getElementById("fin");
const juego = new Juego(() => {
  const v = juego.vista();
  v.forEach((tipo, i) => {
    if (tipo) divs[i].dataset.p = tipo;
    else if (divs[i].dataset.p) delete divs[i].dataset.p;
  });
  puntos.textContent = "Puntos: " + juego.puntos;
  fin.textContent = juego.terminado ? "Fin del juego" : "";
});
let reloj = null; // the gravity timer, started with each game

// The start menu: choosing "Iniciar" (or Enter) closes the dialog and starts the game.
const menu = document.getElementById("menu");
const nota = document.getElementById("nota");
function iniciar() {
  if (juego.enMarcha) return;
  if (menu.open) menu.close();
  if (document.activeElement) document.activeElement.blur();
  juego.empezar();
  clearInterval(reloj);
  reloj = setInterval(() => juego.caer(), CAIDA_MS);
}
document.getElementById("op-iniciar").addEventListener("click", iniciar);
document.getElementById("op-opciones").addEventListener("click", () => {
  nota.textContent = "Velocidad: normal. Sonido: no.";
});
document.getElementById("op-ayuda").addEventListener("click", () => {
  nota.textContent = "← → mover, ↓ bajar, Espacio girar.";
});
document.getElementById("menu-form").addEventListener("submit", (e) => {
  e.preventDefault();
  iniciar();
});

document.addEventListener("keydown", (e) => {
  // Enter starts from the menu, and starts again after the end of a game.
  if (e.key === "Enter") {
    if (menu.open || juego.terminado) { e.preventDefault(); iniciar(); }
    return;
  }
  if (!juego.enMarcha) return;
  const accion = { ArrowLeft: () => juego.lado(-1), ArrowRight: () => juego.lado(1),
                   ArrowDown: () => juego.bajar(), " ": () => juego.rotar() }[e.key];
  if (accion) { e.preventDefault(); accion(); }
});
