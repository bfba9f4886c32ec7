// Tetris: o jogo começa assim que jogo.html carrega (a página de menu, index.html, só traz o link).
// Um canvas de 300x600 (células de 30 px); "Pontos: N" e "Fim de jogo" no DOM.
(function () {
  "use strict";
  const COLUNAS = 10;
  const LINHAS = 20;
  const CELULA = 30;
  const GRAVIDADE_MS = 600;
  const PONTOS_LINHAS = [0, 100, 300, 500, 800];
  const FORMAS = {
    I: [[1, 1, 1, 1]],
    O: [[1, 1], [1, 1]],
    T: [[0, 1, 0], [1, 1, 1]],
    S: [[0, 1, 1], [1, 1, 0]],
    Z: [[1, 1, 0], [0, 1, 1]],
    J: [[1, 0, 0], [1, 1, 1]],
    L: [[0, 0, 1], [1, 1, 1]],
  };
  const CORES = { I: "#38bdf8", O: "#facc15", T: "#a855f7", S: "#22c55e", Z: "#ef4444", J: "#3b82f6", L: "#f97316" };
  const TIPOS = Object.keys(FORMAS);

  const ctx = document.getElementById("tabuleiro").getContext("2d");
  const pontosEl = document.getElementById("pontos");
  const fimEl = document.getElementById("fim");

  let tabuleiro = Array.from({ length: LINHAS }, () => Array(COLUNAS).fill(null));
  let peca = null;
  let pontos = 0;
  let acabou = false;
  let timer = null;

  function colide(forma, lin, col) {
    for (let r = 0; r < forma.length; r++) {
      for (let c = 0; c < forma[r].length; c++) {
        if (!forma[r][c]) continue;
        const y = lin + r;
        const x = col + c;
        if (x < 0 || x >= COLUNAS || y < 0 || y >= LINHAS) return true;
        if (tabuleiro[y][x]) return true;
      }
    }
    return false;
  }

  function girar(forma) {
    // sentido horário
    const h = forma.length;
    const w = forma[0].length;
    const out = [];
    for (let c = 0; c < w; c++) {
      const linha = [];
      for (let r = h - 1; r >= 0; r--) linha.push(forma[r][c]);
      out.push(linha);
    }
    return out;
  }

  function novaPeca() {
    const tipo = TIPOS[Math.floor(Math.random() * TIPOS.length)];
    const forma = FORMAS[tipo];
    const p = { tipo, forma, lin: 0, col: Math.floor((COLUNAS - forma[0].length) / 2) };
    if (colide(p.forma, p.lin, p.col)) {
      // não cabe mais nenhuma peça: fim de jogo, nada mais aparece
      peca = null;
      acabou = true;
      clearInterval(timer);
      fimEl.hidden = false;
      return;
    }
    peca = p;
  }

  function fixar() {
    const f = peca.forma;
    for (let r = 0; r < f.length; r++) {
      for (let c = 0; c < f[r].length; c++) {
        if (f[r][c]) tabuleiro[peca.lin + r][peca.col + c] = peca.tipo;
      }
    }
    const restantes = tabuleiro.filter((linha) => linha.some((v) => !v));
    const completas = LINHAS - restantes.length;
    while (restantes.length < LINHAS) restantes.unshift(Array(COLUNAS).fill(null));
    tabuleiro = restantes;
    pontos += PONTOS_LINHAS[completas];
    novaPeca();
  }

  function mover(dl, dc) {
    if (colide(peca.forma, peca.lin + dl, peca.col + dc)) return false;
    peca.lin += dl;
    peca.col += dc;
    return true;
  }

  function cair() {
    if (!peca) return;
    if (!mover(1, 0)) fixar();
    desenhar();
  }

  function reiniciarGravidade() {
    clearInterval(timer);
    timer = setInterval(cair, GRAVIDADE_MS);
  }

  function desenharCelula(x, y, cor) {
    ctx.fillStyle = cor;
    ctx.fillRect(x * CELULA + 1, y * CELULA + 1, CELULA - 2, CELULA - 2);
    ctx.fillStyle = "rgba(255, 255, 255, 0.25)";
    ctx.fillRect(x * CELULA + 1, y * CELULA + 1, CELULA - 2, 4);
  }

  function desenhar() {
    ctx.fillStyle = "#0f172a";
    ctx.fillRect(0, 0, COLUNAS * CELULA, LINHAS * CELULA);
    ctx.strokeStyle = "#1e293b";
    ctx.lineWidth = 1;
    for (let x = 1; x < COLUNAS; x++) {
      ctx.beginPath();
      ctx.moveTo(x * CELULA + 0.5, 0);
      ctx.lineTo(x * CELULA + 0.5, LINHAS * CELULA);
      ctx.stroke();
    }
    for (let y = 1; y < LINHAS; y++) {
      ctx.beginPath();
      ctx.moveTo(0, y * CELULA + 0.5);
      ctx.lineTo(COLUNAS * CELULA, y * CELULA + 0.5);
      ctx.stroke();
    }
    for (let y = 0; y < LINHAS; y++) {
      for (let x = 0; x < COLUNAS; x++) {
        if (tabuleiro[y][x]) desenharCelula(x, y, CORES[tabuleiro[y][x]]);
      }
    }
    if (peca) {
      const f = peca.forma;
      for (let r = 0; r < f.length; r++) {
        for (let c = 0; c < f[r].length; c++) {
          if (f[r][c]) desenharCelula(peca.col + c, peca.lin + r, CORES[peca.tipo]);
        }
      }
    }
    pontosEl.textContent = "Pontos: " + pontos;
  }

  document.addEventListener("keydown", function (e) {
    if (acabou || !peca) return;
    const k = e.key;
    if (k === "ArrowLeft") mover(0, -1);
    else if (k === "ArrowRight") mover(0, 1);
    else if (k === "ArrowDown") {
      if (mover(1, 0)) {
        pontos += 1;
        reiniciarGravidade();
      }
    } else if (k === "ArrowUp") {
      const nova = girar(peca.forma);
      const base = peca.col + Math.floor((peca.forma[0].length - nova[0].length) / 2);
      for (const desvio of [0, -1, 1, -2, 2]) {
        if (!colide(nova, peca.lin, base + desvio)) {
          peca.forma = nova;
          peca.col = base + desvio;
          break;
        }
      }
    } else if (k === " " || k === "Spacebar") {
      let n = 0;
      while (mover(1, 0)) n++;
      pontos += 2 * n;
      fixar();
      if (!acabou) reiniciarGravidade();
    } else {
      return;
    }
    e.preventDefault();
    desenhar();
  });

  // começa sozinho assim que a página carrega
  novaPeca();
  desenhar();
  timer = setInterval(cair, GRAVIDADE_MS);
})();
