// Injected before any page script (Playwright add_init_script). It records what a
// canvas game draws (rectangles and text, in canvas pixels) and offers read-only
// queries the bot calls: candidate playfields, numbers on the page, game-over text.
// Everything is wrapped in try/catch: the probe must never raise into the game.
(() => {
  if (window.__bench) return;
  // Built-ins captured before any page script runs: a game may declare its own `Map`
  // (a top-level `class Map` for its tile map shadows the built-in for every later
  // script) or assign `window.Set`; the probe keeps working on the real ones.
  const { Map, Set, WeakMap, JSON, Math, Number, Object, Array } = window;
  // The word lists of bench_pipeline/bot/words.json, put in place by words.probe_script().
  const WORDS = /*BENCH_WORDS*/ null;
  const anyOf = (list) => list.join("|");
  const B = { canvases: [], rects: [], texts: [], drawCount: 0 };
  Object.defineProperty(window, "__bench", { value: B, enumerable: false });
  // A value as JSON text, for a bot that cannot rely on the page's own built-ins.
  B.encode = (value) => JSON.stringify(value);

  // Where the game listens for keys: some read them only on one element (a hidden
  // <input> that must keep the focus), which the bot gives the focus back after clicks.
  B.keyTargets = [];
  B.pageKeys = false; // a key listener on window, document or <body>
  try {
    const listen = EventTarget.prototype.addEventListener;
    const KEY_EVENTS = new Set(["keydown", "keyup", "keypress"]);
    EventTarget.prototype.addEventListener = function (type, listener, options) {
      try {
        if (KEY_EVENTS.has(type)) {
          if (this === window || this === document || this === document.body) B.pageKeys = true;
          else if (this instanceof Element && B.keyTargets.length < 20 && !B.keyTargets.includes(this))
            B.keyTargets.push(this);
        }
      } catch (e) {}
      return listen.call(this, type, listener, options);
    };
  } catch (e) {}

  const MAX_RECTS = 8000;
  const MAX_TEXTS = 600;
  const push = (arr, item, max) => {
    arr.push(item);
    if (arr.length > max) arr.splice(0, arr.length - Math.floor(max / 2));
  };
  const canvasIndex = (canvas) => {
    let i = B.canvases.indexOf(canvas);
    if (i < 0) {
      B.canvases.push(canvas);
      i = B.canvases.length - 1;
    }
    return i;
  };
  const transformed = (ctx, x, y, w, h) => {
    let m = { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
    try {
      m = ctx.getTransform();
    } catch (e) {}
    const x1 = m.a * x + m.c * y + m.e;
    const y1 = m.b * x + m.d * y + m.f;
    const x2 = m.a * (x + w) + m.c * (y + h) + m.e;
    const y2 = m.b * (x + w) + m.d * (y + h) + m.f;
    return [Math.min(x1, x2), Math.min(y1, y2), Math.abs(x2 - x1), Math.abs(y2 - y1)];
  };
  const record = (ctx, kind, x, y, w, h) => {
    if (!ctx || !ctx.canvas || !Number.isFinite(x + y + w + h)) return;
    const [X, Y, W, H] = transformed(ctx, x, y, w, h);
    B.drawCount++;
    push(B.rects, [canvasIndex(ctx.canvas), kind, X, Y, W, H, performance.now()], MAX_RECTS);
  };
  const recordText = (ctx, text, x, y) => {
    if (!ctx || !ctx.canvas) return;
    const [X, Y] = transformed(ctx, x, y, 0, 0);
    push(B.texts, [canvasIndex(ctx.canvas), String(text), X, Y, performance.now()], MAX_TEXTS);
  };

  const P = window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype;
  if (P) {
    const wrap = (name, spy) => {
      const original = P[name];
      if (typeof original !== "function") return;
      P[name] = function (...args) {
        try {
          spy(this, args);
        } catch (e) {}
        return original.apply(this, args);
      };
    };
    wrap("fillRect", (c, a) => record(c, "fill", a[0], a[1], a[2], a[3]));
    wrap("strokeRect", (c, a) => record(c, "stroke", a[0], a[1], a[2], a[3]));
    wrap("clearRect", (c, a) => record(c, "clear", a[0], a[1], a[2], a[3]));
    wrap("rect", (c, a) => record(c, "path", a[0], a[1], a[2], a[3]));
    wrap("roundRect", (c, a) => record(c, "path", a[0], a[1], a[2], a[3]));
    wrap("drawImage", (c, a) => {
      const img = a[0] || {};
      if (a.length >= 9) record(c, "image", a[5], a[6], a[7], a[8]);
      else if (a.length >= 5) record(c, "image", a[1], a[2], a[3], a[4]);
      else record(c, "image", a[1], a[2], img.width || 0, img.height || 0);
    });
    // Paths drawn with moveTo/lineTo/arcs (a cell drawn as a filled path, a field's frame
    // or grid stroked as lines): their bounding box is recorded when filled or stroked.
    // The transform is taken at the path's first point (a path rarely spans a change).
    const paths = new WeakMap();
    const extend = (ctx, points) => {
      let p = paths.get(ctx);
      if (!p) {
        let m = { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
        try {
          m = ctx.getTransform();
        } catch (e) {}
        p = { m, x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
        paths.set(ctx, p);
      }
      const m = p.m;
      for (let i = 0; i + 1 < points.length; i += 2) {
        const x = points[i];
        const y = points[i + 1];
        if (!Number.isFinite(x + y)) continue;
        const X = m.a * x + m.c * y + m.e;
        const Y = m.b * x + m.d * y + m.f;
        if (X < p.x0) p.x0 = X;
        if (X > p.x1) p.x1 = X;
        if (Y < p.y0) p.y0 = Y;
        if (Y > p.y1) p.y1 = Y;
      }
    };
    wrap("beginPath", (c) => paths.delete(c));
    wrap("moveTo", (c, a) => extend(c, [a[0], a[1]]));
    wrap("lineTo", (c, a) => extend(c, [a[0], a[1]]));
    wrap("arcTo", (c, a) => extend(c, [a[0], a[1], a[2], a[3]]));
    wrap("quadraticCurveTo", (c, a) => extend(c, [a[2], a[3]]));
    wrap("bezierCurveTo", (c, a) => extend(c, [a[4], a[5]]));
    wrap("arc", (c, a) => extend(c, [a[0] - a[2], a[1] - a[2], a[0] + a[2], a[1] + a[2]]));
    const recordPath = (c, a) => {
      const p = paths.get(c);
      if (!p || a[0] instanceof Path2D || p.x1 - p.x0 < 3 || p.y1 - p.y0 < 3) return;
      if (!c || !c.canvas) return;
      B.drawCount++;
      push(B.rects, [canvasIndex(c.canvas), "path", p.x0, p.y0, p.x1 - p.x0, p.y1 - p.y0, performance.now()], MAX_RECTS);
    };
    wrap("fill", recordPath);
    wrap("stroke", recordPath);
    wrap("fillText", (c, a) => recordText(c, a[0], a[1], a[2]));
    wrap("strokeText", (c, a) => recordText(c, a[0], a[1], a[2]));
  }

  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    const s = getComputedStyle(el);
    return s.visibility !== "hidden" && s.display !== "none" && Number(s.opacity) > 0.05;
  };
  const rectOf = (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height };
  };
  const pathOf = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && parts.length < 12; e = e.parentElement) {
      if (e.id) {
        parts.unshift(`#${CSS.escape(e.id)}`);
        break;
      }
      const parent = e.parentElement;
      const index = parent ? Array.prototype.indexOf.call(parent.children, e) + 1 : 1;
      parts.unshift(`${e.tagName.toLowerCase()}:nth-child(${index})`);
    }
    return parts.join(" > ");
  };

  // A block of boxes whose columns (or rows) are not evenly spaced is several lattices
  // side by side: a field with a next-piece or hold box next to it, a frame's width
  // apart. Split it where the spacing jumps.
  const splitAxis = (block, axis) => {
    const vals = [...new Set(block.map((b) => Math.round(b[axis])))].sort((a, b) => a - b);
    const pos = vals.filter((v, i) => i === 0 || v - vals[i - 1] > 2);
    if (pos.length < 3) return [block];
    const gaps = pos.slice(1).map((v, i) => v - pos[i]);
    const typical = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
    const cuts = [];
    gaps.forEach((g, i) => {
      if (g > typical + Math.max(3, 0.15 * typical)) cuts.push((pos[i] + pos[i + 1]) / 2);
    });
    if (!cuts.length) return [block];
    const parts = cuts.map(() => []).concat([[]]);
    for (const b of block) {
      let k = 0;
      while (k < cuts.length && b[axis] > cuts[k]) k++;
      parts[k].push(b);
    }
    return parts.filter((part) => part.length);
  };
  const splitIrregular = (block) => {
    let parts = [block];
    for (let round = 0; round < 3; round++) {
      const next = parts.flatMap((b) => splitAxis(b, "x")).flatMap((b) => splitAxis(b, "y"));
      if (next.length === parts.length) break;
      parts = next;
    }
    return parts;
  };

  // Groups of equal-sized small boxes laid on a lattice: the cells of a DOM or SVG board.
  const lattices = (elements, kind) => {
    // Group boxes by size, allowing a few pixels of difference (borders at the edges of a
    // table, rounding of fractional layouts).
    const boxes = [];
    for (const el of elements) {
      const r = el.getBoundingClientRect();
      if (r.width < 4 || r.height < 4 || r.width > 120 || r.height > 120) continue;
      if (Math.abs(r.width - r.height) > Math.max(2, 0.3 * r.width)) continue;
      const s = getComputedStyle(el);
      if (s.display === "none" || s.visibility === "hidden") continue;
      boxes.push({ x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height, el });
    }
    // Alike in width and in height: the bricks of a wall beside the field can be as wide
    // as its cells and not as tall.
    boxes.sort((a, b) => a.w - b.w || a.h - b.h);
    const groups = new Map();
    const firsts = [];
    const near = (u, v) => Math.abs(u - v) <= Math.max(3, 0.12 * v);
    for (const b of boxes) {
      let current = firsts.find((g) => near(b.w, g.w) && near(b.h, g.h));
      if (!current) {
        current = { w: b.w, h: b.h, items: [] };
        firsts.push(current);
        groups.set(`${Math.round(b.w)}x${Math.round(b.h)}`, current.items);
      }
      current.items.push(b);
    }
    const found = [];
    for (const [key, boxes] of groups) {
      if (boxes.length < 12) continue;
      // Split into spatial blocks: boxes whose neighbours are at most ~1.6 cells away.
      const pitch = boxes[boxes.length - 1].w;
      const blocks = [];
      const seen = new Set();
      for (let i = 0; i < boxes.length; i++) {
        if (seen.has(i)) continue;
        const block = [];
        const stack = [i];
        seen.add(i);
        while (stack.length) {
          const j = stack.pop();
          block.push(boxes[j]);
          for (let k = 0; k < boxes.length; k++) {
            if (seen.has(k)) continue;
            if (
              Math.abs(boxes[k].x - boxes[j].x) <= pitch * 1.6 + 2 &&
              Math.abs(boxes[k].y - boxes[j].y) <= pitch * 1.6 + 2
            ) {
              seen.add(k);
              stack.push(k);
            }
          }
        }
        blocks.push(...splitIrregular(block));
      }
      for (const block of blocks) {
        const xs = [...new Set(block.map((b) => Math.round(b.x)))].sort((a, b) => a - b);
        const ys = [...new Set(block.map((b) => Math.round(b.y)))].sort((a, b) => a - b);
        const dedupe = (vals) => vals.filter((v, i) => i === 0 || v - vals[i - 1] > 2);
        const cx = dedupe(xs);
        const cy = dedupe(ys);
        if (cx.length < 3 || cy.length < 3) continue;
        const x0 = Math.min(...block.map((b) => b.x));
        const y0 = Math.min(...block.map((b) => b.y));
        const x1 = Math.max(...block.map((b) => b.x + b.w));
        const y1 = Math.max(...block.map((b) => b.y + b.h));
        const parent = block[0].el.parentElement;
        found.push({
          kind,
          locator: `${kind}-lattice ${key} under ${parent ? pathOf(parent) : "?"}`,
          rect: { x: x0, y: y0, w: x1 - x0, h: y1 - y0 },
          cols: cx.length,
          rows: cy.length,
          cells: block.length,
        });
      }
    }
    return found;
  };

  B.candidates = () => {
    const out = [];
    try {
      document.querySelectorAll("canvas").forEach((c, i) => {
        if (!visible(c)) return;
        const r = c.getBoundingClientRect();
        // The drawing surface is the content box: skip CSS borders and padding.
        const s = getComputedStyle(c);
        const bl = parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft) || 0;
        const bt = parseFloat(s.borderTopWidth) + parseFloat(s.paddingTop) || 0;
        const br = parseFloat(s.borderRightWidth) + parseFloat(s.paddingRight) || 0;
        const bb = parseFloat(s.borderBottomWidth) + parseFloat(s.paddingBottom) || 0;
        out.push({
          kind: "canvas",
          index: canvasIndex(c),
          locator: `canvas ${pathOf(c)}`,
          rect: { x: r.left + scrollX + bl, y: r.top + scrollY + bt, w: r.width - bl - br, h: r.height - bt - bb },
          backing: { w: c.width, h: c.height },
        });
      });
      const svgRects = [...document.querySelectorAll("svg rect, svg use, svg path, svg polygon")];
      out.push(...lattices(svgRects, "svg"));
      const small = [];
      for (const el of document.body ? document.body.querySelectorAll("*") : []) {
        if (el.closest("svg") || el.tagName === "CANVAS") continue;
        small.push(el);
        if (small.length > 20000) break;
      }
      out.push(...lattices(small, "dom"));
      // Boards that draw only filled cells: a box with the 1:2 shape of a 10x20 field.
      for (const el of small) {
        const r = el.getBoundingClientRect();
        if (r.height < 160 || r.width < 80) continue;
        const ratio = r.width / r.height;
        if (ratio < 0.42 || ratio > 0.58) continue;
        if (!visible(el)) continue;
        out.push({ kind: "dom-box", locator: `box ${pathOf(el)}`, rect: rectOf(el), children: el.children.length });
      }
      // A field that exists only in a picture: an element whose CSS background image
      // draws the well (and often the panels beside it), the pieces being <img>s or
      // boxes placed over it. The bot looks for the field in its pixels, as for WebGL.
      let pictures = 0;
      for (const el of small) {
        if (pictures >= 4) break;
        const r = el.getBoundingClientRect();
        if (r.height < 200 || r.width < 100) continue;
        const image = getComputedStyle(el).backgroundImage || "";
        if (!image.includes("url(") || !visible(el)) continue;
        pictures++;
        out.push({
          kind: "picture",
          index: 1000 + pictures,
          locator: `picture ${pathOf(el)}`,
          rect: rectOf(el),
          backing: { w: r.width, h: r.height },
        });
      }
      document.querySelectorAll("svg").forEach((svg) => {
        if (!visible(svg)) return;
        out.push({ kind: "svg-box", locator: `svg ${pathOf(svg)}`, rect: rectOf(svg) });
        svg.querySelectorAll("rect").forEach((rect) => {
          const r = rect.getBoundingClientRect();
          if (r.height < 160 || r.width < 80) return;
          const ratio = r.width / r.height;
          if (ratio < 0.42 || ratio > 0.58) return;
          out.push({ kind: "svg-box", locator: `svg rect ${pathOf(rect)}`, rect: rectOf(rect) });
        });
      });
    } catch (e) {
      out.push({ kind: "error", message: String(e) });
    }
    return out;
  };

  B.canvasDraws = (index, sinceMs) => {
    const since = performance.now() - (sinceMs || 1e9);
    return B.rects.filter((r) => r[0] === index && r[6] >= since).map((r) => r.slice(1, 6));
  };

  // A label is any word, in any script: agents are prompted in six languages.
  const LETTER = /\p{L}/u;
  // A unit after the number is part of it: "120 pts", "20分" (points in Chinese and
  // Japanese), "30점" (Korean), "40 Punkte".
  const NUMBER = /^[^\d-]{0,24}?(-?\d[\d,. ]{0,11})\s*(pts|points|punkte|pkt|分|点|점)?$/i;
  const parseNumber = (text) => {
    const m = NUMBER.exec(text.trim());
    if (!m) return null;
    const digits = m[1].replace(/[,. ]/g, "");
    if (!/^-?\d{1,10}$/.test(digits)) return null;
    return Number(digits);
  };
  const labelOf = (el, text) => {
    const own = text.replace(/-?\d[\d,. ]*/g, "").trim();
    if (LETTER.test(own)) return own.slice(0, 30);
    for (let e = el, depth = 0; e && depth < 3; e = e.parentElement, depth++) {
      let prev = e.previousElementSibling;
      for (let n = 0; prev && n < 2; prev = prev.previousElementSibling, n++) {
        const t = (prev.innerText || prev.textContent || "").trim();
        if (LETTER.test(t) && t.length < 30) return t;
      }
      const parent = e.parentElement;
      if (parent) {
        const t = (parent.innerText || parent.textContent || "").replace(/-?\d[\d,. ]*/g, "").trim();
        if (LETTER.test(t) && t.length < 30) return t;
      }
    }
    return "";
  };

  B.numbers = () => {
    const out = [];
    try {
      const walker = document.createTreeWalker(document.body || document, NodeFilter.SHOW_TEXT);
      const seen = new Set();
      for (let node = walker.nextNode(); node && out.length < 200; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!el || seen.has(el) || !/\d/.test(node.textContent)) continue;
        seen.add(el);
        if (["SCRIPT", "STYLE", "NOSCRIPT"].includes(el.tagName)) continue;
        const text = (el.textContent || "").trim();
        const value = text.length > 40 ? null : parseNumber(text);
        if (!visible(el)) continue;
        const r = el.getBoundingClientRect();
        const source = `${el.closest("svg") ? "svg" : "dom"}:${pathOf(el)}`;
        if (value !== null) {
          out.push({ source, value, label: labelOf(el, text), x: r.left, y: r.top });
          continue;
        }
        // Several counters in one element, one per line ("Lines: 1<br>Count: 100"):
        // each text line is read on its own.
        const lines = [...el.childNodes].filter((n) => n.nodeType === 3 && /\d/.test(n.textContent));
        if (lines.length < 2) continue;
        lines.forEach((line, i) => {
          const own = line.textContent.trim();
          const v = own.length > 40 ? null : parseNumber(own);
          if (v !== null) out.push({ source: `${source}#${i}`, value: v, label: labelOf(el, own), x: r.left, y: r.top });
        });
      }
      // Numbers shown as the value of a form field (<input id=score disabled>, <output>).
      for (const el of document.querySelectorAll("input, output, progress, meter")) {
        if (out.length >= 200) break;
        const type = (el.getAttribute("type") || "text").toLowerCase();
        if (el.tagName === "INPUT" && !["text", "number", ""].includes(type)) continue;
        const text = String(el.value ?? el.textContent ?? "").trim();
        if (!text || text.length > 40 || !visible(el)) continue;
        const value = parseNumber(text);
        if (value === null) continue;
        const r = el.getBoundingClientRect();
        const aria = el.getAttribute("aria-label") || el.getAttribute("name") || el.id || "";
        const label = labelOf(el, text) || (LETTER.test(aria) ? aria.slice(0, 30) : "");
        out.push({ source: `dom:${pathOf(el)}`, value, label, x: r.left, y: r.top });
      }
      // Canvas text, latest value per canvas position.
      const latest = new Map();
      for (const [index, text, x, y] of B.texts) latest.set(`canvas${index}@${Math.round(x)},${Math.round(y)}`, { index, text, x, y });
      for (const [key, t] of latest) {
        const value = parseNumber(t.text);
        if (value === null) continue;
        let label = t.text.replace(/-?\d[\d,. ]*/g, "").trim();
        if (!LETTER.test(label)) {
          // The nearest label drawn above or to the left on the same canvas.
          let best = null;
          for (const [k2, u] of latest) {
            if (u.index !== t.index || k2 === key || !LETTER.test(u.text) || /\d/.test(u.text)) continue;
            const d = Math.hypot(u.x - t.x, (u.y - t.y) * 1.5);
            if ((u.y <= t.y + 2 || u.x < t.x) && d < 160 && (!best || d < best.d)) best = { d, text: u.text };
          }
          label = best ? best.text : "";
        }
        out.push({ source: `canvas-text:${key}`, value, label: label.slice(0, 30), x: t.x, y: t.y });
      }
    } catch (e) {}
    return out;
  };

  // Game-over wording in the prompt languages (en, de, es, fr, ja, zh) and common variants.
  const GAME_OVER = new RegExp(anyOf(WORDS.game_over), "i");
  B.gameOverText = () => {
    try {
      const body = document.body ? document.body.innerText || "" : "";
      const m = GAME_OVER.exec(body);
      if (m) return `text:${m[0]}`;
      const recent = performance.now() - 3000;
      for (const [, text, , , t] of B.texts) if (t >= recent && GAME_OVER.test(text)) return `canvas-text:${text}`;
    } catch (e) {}
    return null;
  };

  // Buttons and clickable things that look like a way to start a game.
  // Start and restart buttons in the prompt languages; Latin words must end at a word boundary.
  const START = new RegExp(
    "^[\\s\u25b6\u25ba\u2022:!\u00a1\u00bf-]*(?:(?:" +
      anyOf(WORDS.start) +
      ")(?![\\p{L}\\d])|" +
      anyOf(WORDS.start_unbounded) +
      ")",
    "iu"
  );
  B.startButtons = () => {
    const out = [];
    try {
      // Labels too: a menu of radio options in a <dialog> (Start / Options / Help).
      const els = document.querySelectorAll(
        "button, a, [role=button], input[type=button], input[type=submit], label, li, div, span, h1, h2, h3, h4, h5, h6, p, strong, b"
      );
      for (const el of els) {
        if (!visible(el)) continue;
        const text = (el.innerText || el.value || el.getAttribute("aria-label") || "").trim();
        if (!text || text.length > 30 || !START.test(text)) continue;
        // The words may sit in a heading inside a bigger button ("Play Tetris" above a
        // line of description): the heading is clicked, and the click reaches the button.
        const clickable =
          el.matches("button, a, [role=button], input, label") ||
          el.closest("button, a, [role=button], label") ||
          getComputedStyle(el).cursor === "pointer" ||
          el.onclick;
        if (!clickable) continue;
        out.push({ text, selector: pathOf(el) });
      }
      // Then controls with no text at all, whose label is drawn inside an image
      // (<img id="startGame" src="start.png">): named by their id, class, alt, title or
      // image file. Tried after every button that says what it does.
      const pictures = document.querySelectorAll("img, input[type=image], button, [role=button], a, svg");
      for (const el of pictures) {
        if (!visible(el) || (el.innerText || el.value || "").trim()) continue;
        const alt = (el.getAttribute("alt") || el.getAttribute("title") || el.getAttribute("aria-label") || "").trim();
        const file = (el.getAttribute("src") || "").split(/[?#]/)[0].split("/").pop().replace(/\.[a-z0-9]+$/i, "");
        const named = [el.id, typeof el.className === "string" ? el.className : "", file].some(startName);
        if (!(named || (alt && alt.length <= 30 && START.test(alt)))) continue;
        out.push({ text: alt || `<${el.tagName.toLowerCase()} ${el.id ? "#" + el.id : file}>`, selector: pathOf(el) });
      }
    } catch (e) {}
    return out;
  };
  // An identifier or file name that names a start control: startGame, btn-start, play_btn.
  const START_NAMES = new Set(WORDS.start_names);
  const startName = (name) =>
    (name || "")
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .replace(/new[\s_-]*game/g, "newgame")
      .split(/[^a-z]+/)
      .some((word) => START_NAMES.has(word));

  // Buttons that close a dialog or overlay covering the page (rules, intro, cookie notes):
  // while it is open it catches the clicks meant for the real Start button.
  const CLOSE = new RegExp(
    "^(?:[x\u00d7\u2715\u2716\u2573]|" +
      anyOf(WORDS.close) +
      // "Got it, thanks!", "OK, thank you": the thanks changes nothing.
      ")(?:[\\s,.!]+(?:" +
      anyOf(WORDS.thanks) +
      "))?[\\s.!]*$",
    "iu"
  );
  const covering = (el) => {
    // The element is inside something fixed or absolute that covers most of the viewport.
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.position !== "fixed" && s.position !== "absolute") continue;
      const r = e.getBoundingClientRect();
      if (r.width * r.height >= 0.4 * innerWidth * innerHeight) return e;
    }
    return null;
  };
  B.overlayButtons = () => {
    const out = [];
    try {
      const els = document.querySelectorAll("button, a, [role=button], input[type=button], input[type=submit], span, div");
      for (const el of els) {
        if (!visible(el)) continue;
        const text = (el.innerText || el.value || el.getAttribute("aria-label") || el.title || "").trim();
        const aria = (el.getAttribute("aria-label") || el.title || "").trim();
        if (!text || text.length > 30 || !(CLOSE.test(text) || CLOSE.test(aria)) || START.test(text)) continue;
        const clickable = el.matches("button, a, [role=button], input") || getComputedStyle(el).cursor === "pointer" || el.onclick;
        if (!clickable || !covering(el)) continue;
        out.push({ text, selector: pathOf(el) });
      }
    } catch (e) {}
    return out;
  };

  // Empty text fields a game asks a player to fill before it starts (a name, a nickname):
  // an input of its own that reads the game's keys is not one of them.
  B.nameInputs = () => {
    const out = [];
    try {
      for (const el of document.querySelectorAll("input, textarea")) {
        const type = (el.getAttribute("type") || "text").toLowerCase();
        if (!["text", "search", "email"].includes(type) && el.tagName !== "TEXTAREA") continue;
        if (el.disabled || el.readOnly || el.value || !visible(el)) continue;
        const r = el.getBoundingClientRect();
        if (r.width < 40 || r.height < 10) continue;
        if (el.onkeydown || el.onkeyup || el.onkeypress || B.keyTargets.includes(el)) continue;
        out.push({ text: el.placeholder || el.name || el.id || "", selector: pathOf(el) });
        if (out.length >= 3) break;
      }
    } catch (e) {}
    return out;
  };

  // A menu of game modes shown before the field (Marathon / Sprint / Ultra, Easy / Hard):
  // two or more enabled buttons alike (same tag and class), each with a short label, none
  // of them a way to start, close or configure. Choosing one is a step towards the start.
  // Links are left alone (they may leave the page).
  const NOT_A_MODE = new RegExp(anyOf(WORDS.not_a_mode), "iu");
  B.menuButtons = () => {
    const groups = new Map();
    try {
      const els = document.querySelectorAll("button, [role=button], input[type=button]");
      for (const el of els) {
        if (el.disabled || !visible(el) || el.closest("a")) continue;
        const text = (el.innerText || el.value || el.getAttribute("aria-label") || "").trim();
        if (!text || text.length > 24 || !LETTER.test(text) || START.test(text) || CLOSE.test(text)) continue;
        if (NOT_A_MODE.test(text)) continue;
        const key = `${el.tagName}.${el.className}`;
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push({ text, selector: pathOf(el) });
      }
    } catch (e) {}
    const menus = [...groups.values()].filter((g) => g.length >= 2 && g.length <= 8);
    menus.sort((a, b) => b.length - a.length);
    return menus.length ? menus[0] : [];
  };

  // After a click the clicked button keeps the focus (and Space would press it again):
  // the focus leaves it, and goes to the field itself when the field (or a box around it)
  // takes the focus by a tabindex of its own. Some games listen for keys only on their
  // canvas, which a player clicks first ("Click on the canvas to focus keyboard input").
  B.focusField = (x, y, blur) => {
    try {
      const active = document.activeElement;
      if (!blur && active && active !== document.body) return null; // the page chose it
      if (blur && active && active.blur) active.blur();
      const hit = x >= 0 ? document.elementFromPoint(x, y) : null;
      for (let e = hit; e && e !== document.body && e !== document.documentElement; e = e.parentElement) {
        if (!e.hasAttribute || !e.hasAttribute("tabindex") || e.tabIndex < 0) continue;
        if (e.matches("button, a, input, select, textarea, [role=button]")) return null;
        e.focus({ preventScroll: true });
        return e.tagName.toLowerCase();
      }
      if (blur) {
        const input = keyInput();
        if (input) {
          input.focus({ preventScroll: true });
          return `${input.tagName.toLowerCase()} that reads the keys`;
        }
      }
    } catch (e) {}
    return null;
  };
  // An <input> or <textarea> the game reads its keys from (an onkeydown of its own or a
  // key listener added to it) while nothing on the page as a whole listens for keys.
  const keyInput = () => {
    if (B.pageKeys || window.onkeydown || window.onkeyup || document.onkeydown || document.onkeyup ||
        (document.body && (document.body.onkeydown || document.body.onkeyup))) return null;
    const own = [...document.querySelectorAll("input, textarea")].filter(
      (e) => e.onkeydown || e.onkeyup || e.onkeypress
    );
    for (const e of [...own, ...B.keyTargets]) {
      if (e.isConnected && e.matches("input, textarea") && !e.disabled) return e;
    }
    return null;
  };

  B.pageText = () => (document.body ? (document.body.innerText || "").slice(0, 2000) : "");

  // Arrow keys and Space scroll a page that is taller than the window when the game does
  // not prevent it, and the bot reads the field at fixed window coordinates: the window
  // is kept where it was when the bot began (the game's own scroll containers are left).
  B.lockScroll = () => {
    if (B.scrollLocked) return true;
    B.scrollLocked = true;
    const x = window.scrollX;
    const y = window.scrollY;
    window.addEventListener(
      "scroll",
      () => {
        try {
          if (window.scrollX !== x || window.scrollY !== y) window.scrollTo(x, y);
        } catch (e) {}
      },
      { capture: true, passive: true }
    );
    return true;
  };
  B.pageSize = () => {
    const d = document.documentElement;
    return [Math.max(d.scrollWidth, document.body ? document.body.scrollWidth : 0),
            Math.max(d.scrollHeight, document.body ? document.body.scrollHeight : 0)];
  };

  // The page's own code, as loaded: the HTML (inline scripts, onkeydown attributes) and
  // every same-origin script file, for the bot's guess of which keys the game handles.
  // Started once, asynchronously; `sourceText` stays null until it is done.
  B.sourceText = null;
  B.collectSources = () => {
    if (B.collecting) return true;
    B.collecting = true;
    const LIMIT = 3000000;
    const parts = [];
    let size = 0;
    const add = (text) => {
      if (typeof text !== "string" || size >= LIMIT) return;
      const part = text.slice(0, LIMIT - size);
      size += part.length;
      parts.push(part);
    };
    const urls = new Set();
    try {
      add(document.documentElement.outerHTML);
      for (const s of document.scripts) if (s.src) urls.add(s.src);
      for (const e of performance.getEntriesByType("resource")) {
        if (e.initiatorType === "script" || /\.m?js(\?|#|$)/.test(e.name)) urls.add(e.name);
      }
    } catch (e) {}
    const same = [...urls]
      .filter((u) => {
        try {
          return new URL(u, location.href).origin === location.origin;
        } catch (e) {
          return false;
        }
      })
      .slice(0, 40);
    const done = () => {
      B.sourceText = parts.join("\n");
    };
    try {
      Promise.all(
        same.map((u) =>
          fetch(u, { cache: "force-cache" })
            .then((r) => r.text())
            .then(add, () => {})
        )
      ).then(done, done);
    } catch (e) {
      done();
    }
    return true;
  };
})();
