// The in-page half of the state reader (bench_pipeline/bot/readers/state.py), sent with
// CDP Runtime.callFunctionOn: one function, `op` says what to do. It runs in the game's
// own world, so it trusts nothing there:
// - built-ins come from `kit`, functions the Python side checked to be the browser's own
//   (a game may replace Object.keys, JSON, Array.prototype.map, Map...);
// - properties are read through getOwnPropertyDescriptor and only when they hold data:
//   a getter is never run;
// - an object is stepped into only once it is known not to be a Proxy (a trap is game
//   code): real arrays come from Runtime.queryObjects, typed arrays pass the browser's
//   own length getter, other objects come from CDP's own view of them. Anything else
//   is handed back as "pending" for the Python side to check;
// - no method of a game object is called, nothing is converted with toString/valueOf,
//   every loop is bounded, and our own objects have no prototype (a setter a game put on
//   Array.prototype or Object.prototype never sees our writes).
function stateReaderOp(op, a1, a2, a3, a4, ...rest) {
  // (sloppy mode: a "use strict" directive is not allowed with a rest parameter)
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const DIGITS = "0123456789";
  const MAX_HEAP = 1000000; // arrays looked at in one scan
  const MAX_BOARDS = 40;
  const MAX_SHAPES = 20;
  const MAX_PENDING = 2000;
  const MAX_STR = 32;
  // Kinds of objects we may step into (CDP said so, or queryObjects found them).
  const K_BAD = 0; // a Proxy, a platform object, a function: never read
  const K_ARRAY = 1;
  const K_TYPED = 2;
  const K_OBJECT = 3;

  if (op === "pack") return rest; // values CDP handed us, as one list (before `this` is ours)
  if (op === "init") {
    // this: the kit [gopd, apply, WeakMap, wmGet, wmSet, Map, mapGet, mapSet, taLen,
    // ownKeys, setProto, isArray]; a1: the global object; a2: our lexical accessors; rest: objects
    // a key listener is bound to.
    const k = this;
    const H = { __proto__: null };
    H.gopd = k[0];
    H.apply = k[1];
    H.WeakMap = k[2];
    H.wmGet = k[3];
    H.wmSet = k[4];
    H.Map = k[5];
    H.mapGet = k[6];
    H.mapSet = k[7];
    H.taLen = k[8];
    H.ownKeys = k[9];
    H.setProto = k[10];
    H.isArray = k[11];
    H.known = new H.WeakMap();
    H.pathOf = new H.WeakMap(); // object -> indices of the paths found to it, shortest first
    H.global = a1;
    H.lex = a2;
    H.fixed = rest; // objects a key listener is bound to
    H.paths = null; // [{root, i, steps}] from Python
    H.boards = null;
    H.shapes = null;
    H.scalars = null;
    H.pending = null;
    H.named = []; // typed arrays found under a name
    H.setProto(H.named, null);
    H.apply(H.wmSet, H.known, [a1, K_OBJECT]);
    return H;
  }

  const H = this;
  const gopd = H.gopd;
  const apply = H.apply;
  const arr = () => {
    const a = [];
    H.setProto(a, null);
    return a;
  };
  const push = (a, v) => {
    a[a.length] = v;
  };
  // Runtime.queryObjects does not list typed arrays, but the browser's own length getter
  // tells one apart (it throws for anything else, a Proxy included, and runs no page code).
  const kindOf = (o) => {
    const k = apply(H.wmGet, H.known, [o]);
    if (k !== undefined) return k;
    try {
      apply(H.taLen, o, []);
    } catch (e) {
      return undefined;
    }
    apply(H.wmSet, H.known, [o, K_TYPED]);
    return K_TYPED;
  };
  const setKind = (o, k) => apply(H.wmSet, H.known, [o, k]);
  const isObj = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  // A data property's value; MISSING for an absent property or a getter (never run).
  const MISSING = { __proto__: null };
  const data = (o, key) => {
    const d = gopd(o, key);
    if (d === undefined) return MISSING;
    const v = gopd(d, "value"); // the descriptor's own `value`: a data property
    return v === undefined ? MISSING : v.value;
  };
  const lengthOf = (o, kind) => {
    if (kind === K_TYPED) return apply(H.taLen, o, []);
    if (kind === K_ARRAY) return o.length; // an array's own, unconfigurable data property
    return -1;
  };
  const addPending = (o) => {
    if (H.pending.length < MAX_PENDING) push(H.pending, o);
  };
  // Step into `v` only when it is known and readable.
  const usable = (v) => {
    if (!isObj(v) || v === MISSING) return -1;
    const k = kindOf(v);
    if (k === undefined) {
      addPending(v);
      return -1;
    }
    return k === K_BAD ? -1 : k;
  };
  // A list element (array or typed array) or a string's character.
  const at = (o, kind, i) => (kind === K_TYPED || kind === "s" ? o[i] : data(o, i));

  // ---- cell codes: one character per cell ------------------------------------------
  const newDict = () => ({ __proto__: null, m: new H.Map(), n: 0, legend: arr() });
  const short = (v) => {
    const t = typeof v;
    if (t === "string") return "'" + (v.length > MAX_STR ? cut(v) : v) + "'";
    if (t === "number" || t === "boolean" || v === null || v === undefined) return "" + v;
    return t;
  };
  const cut = (s) => {
    let out = "";
    for (let i = 0; i < MAX_STR && i < s.length; i++) out += s[i];
    return out + "...";
  };
  const dictCode = (dict, key, shown) => {
    const got = apply(H.mapGet, dict.m, [key]);
    if (got !== undefined) return got;
    if (dict.n >= LETTERS.length) return "#";
    const c = LETTERS[dict.n];
    dict.n += 1;
    apply(H.mapSet, dict.m, [key, c]);
    push(dict.legend, c + "=" + shown);
    return c;
  };
  const signature = (v, k) => {
    let sig = k === K_ARRAY ? "[" : "{";
    if (k === K_ARRAY || k === K_TYPED) {
      const n = lengthOf(v, k);
      for (let i = 0; i < n && i < 6; i++) {
        const e = at(v, k, i);
        sig += (isObj(e) ? "obj" : short(e)) + ",";
      }
      return sig;
    }
    const keys = H.ownKeys(v);
    const n = keys.length;
    let used = 0;
    for (let i = 0; i < n && used < 6; i++) {
      const key = keys[i];
      if (typeof key !== "string") continue;
      const e = data(v, key);
      if (e === MISSING || isObj(e) || typeof e === "function") continue;
      sig += key + ":" + short(e) + ",";
      used += 1;
    }
    return sig;
  };
  // mode 0: an object cell is coded by its identity (a game's shared EMPTY or colour
  // objects); mode 1: by its own data (a fresh {filled, colour} object per cell); a
  // string mode: by that one property ({filled: false, colour: "red"} is still empty).
  const cellCode = (v, dict, mode) => {
    const t = typeof v;
    if (t === "number") {
      if (v >= 0 && v <= 9 && v % 1 === 0) return DIGITS[v];
      return dictCode(dict, v, short(v));
    }
    if (t === "boolean") return v ? "#" : "-";
    if (v === null) return "~";
    if (v === undefined) return "_";
    if (t === "string") return v === "" ? "`" : dictCode(dict, v, short(v));
    if (t === "object" || t === "function") {
      if (mode === 0) return dictCode(dict, v, "object");
      const k = kindOf(v);
      if (k === undefined) {
        addPending(v);
        return "?";
      }
      if (k === K_BAD) return "!";
      if (typeof mode === "string") {
        const own = k === K_OBJECT ? data(v, mode) : MISSING;
        return own === MISSING || isObj(own) ? "?" : cellCode(own, dict, 0);
      }
      const sig = signature(v, k);
      return dictCode(dict, sig, sig);
    }
    return "?";
  };

  // ---- paths: re-found every sample (a game may replace its board array) -------------
  const resolve = (p, scopeRoots, upTo) => {
    let o;
    if (p.root === "w") o = H.global;
    else if (p.root === "l") o = H.lex[p.i]();
    else if (p.root === "o") o = H.fixed[p.i];
    else if (p.root === "s") o = scopeRoots[p.i];
    else return MISSING;
    const steps = p.steps;
    const n = upTo === undefined ? steps.length : upTo;
    for (let i = 0; i < n; i++) {
      const k = usable(o);
      if (k < 0) return MISSING;
      o = data(o, steps[i]);
      if (o === MISSING) return MISSING;
    }
    return o;
  };

  // ---- board shapes --------------------------------------------------------------------
  // rows x cols of a list of equal rows (arrays, typed arrays or strings), else null.
  const gridShape = (o, k, minR, maxR, minC, maxC) => {
    const R = lengthOf(o, k);
    if (k !== K_ARRAY || R < minR || R > maxR) return null;
    let C = -1;
    let rowKind = null;
    for (let r = 0; r < R; r++) {
      const row = data(o, r);
      let rk;
      let len;
      if (typeof row === "string") {
        rk = "s";
        len = row.length;
      } else {
        if (!isObj(row)) return null;
        const kk = kindOf(row);
        if (kk !== K_ARRAY && kk !== K_TYPED) return null;
        rk = kk;
        len = lengthOf(row, kk);
      }
      if (r === 0) {
        C = len;
        rowKind = rk;
        if (C < minC || C > maxC) return null;
      } else if (len !== C || rk !== rowKind) return null;
    }
    return { __proto__: null, R, C, rowKind };
  };
  const CELL_TYPES = ["number", "string", "boolean", "null", "undefined", "object"];
  const cellKinds = (o, shape) => {
    const seen = { __proto__: null };
    let objects = 0;
    let nested = false;
    for (let r = 0; r < shape.R; r++) {
      const row = data(o, r);
      for (let c = 0; c < shape.C; c++) {
        const v = at(row, shape.rowKind, c);
        const t = v === null ? "null" : v === MISSING ? "undefined" : typeof v;
        seen[t] = true;
        if (t === "object") {
          objects += 1;
          if (kindOf(v) === K_ARRAY) nested = true;
        }
      }
    }
    let out = "";
    for (let i = 0; i < CELL_TYPES.length; i++) if (seen[CELL_TYPES[i]]) out += (out ? "," : "") + CELL_TYPES[i];
    if (seen.function || seen.symbol || seen.bigint) return null;
    return { __proto__: null, types: out, objects, nested };
  };
  const flatKinds = (o, k, L) => {
    const seen = { __proto__: null };
    const distinct = new H.Map();
    let nd = 0;
    let objects = 0;
    for (let i = 0; i < L; i++) {
      const v = at(o, k, i);
      if (v === MISSING) return null;
      const t = v === null ? "null" : typeof v;
      if (t === "function" || t === "symbol" || t === "bigint") return null;
      if (t === "object") objects += 1;
      seen[t] = true;
      if (apply(H.mapGet, distinct, [v]) === undefined) {
        nd += 1;
        if (nd > 16) return null; // a board holds a few cell values; a data table many
        apply(H.mapSet, distinct, [v, 1]);
      }
    }
    let out = "";
    for (let i = 0; i < CELL_TYPES.length; i++) if (seen[CELL_TYPES[i]]) out += (out ? "," : "") + CELL_TYPES[i];
    return { __proto__: null, types: out, objects, distinct: nd };
  };

  // How well a rows x cols array fits the expected field (rows, cols) of the renderer.
  const fit = (R, C, rows, cols) => {
    if (R === rows && C === cols) return 100;
    if (R === cols && C === rows) return 90;
    if (C === cols && R > rows && R <= rows + 6) return 85;
    if (R === cols && C > rows && C <= rows + 6) return 75;
    if (C === cols + 2 && R >= rows && R <= rows + 7) return 70;
    if (R === cols + 2 && C >= rows && C <= rows + 7) return 60;
    const area = R * C;
    let s = area / 10;
    if (s > 45) s = 45;
    if (R < 6 || C < 6) s = s / 3; // a piece's matrix, a preview
    return s;
  };

  if (op === "known") {
    // a1: kinds of the objects CDP has seen (rest: the objects), a2: their path indices.
    for (let i = 0; i < rest.length; i++) {
      const o = rest[i];
      if (!isObj(o)) continue;
      if (apply(H.wmGet, H.known, [o]) === undefined || a1[i] === K_BAD) setKind(o, a1[i]);
      if (a1[i] === K_TYPED && H.named.length < MAX_PENDING) push(H.named, o);
      if (a2[i] >= 0) {
        // every name an object goes by (up to 4): `empty` and `state.board` may be one
        // array at first, until the game puts a new one in `state.board`
        let list = apply(H.wmGet, H.pathOf, [o]);
        if (list === undefined) {
          list = arr();
          apply(H.wmSet, H.pathOf, [o, list]);
        }
        if (list.length < 4) push(list, a2[i]);
      }
    }
    return rest.length;
  }

  if (op === "analyze") {
    // a1: every Array of the heap (Runtime.queryObjects), a2: unused,
    // a3: {rows, cols, flat: [lengths]}, a4: {paths, shapes: [path indices]}.
    H.paths = a4.paths;
    const heapN = a1.length < MAX_HEAP ? a1.length : MAX_HEAP;
    // queryObjects lists what inherits from the prototype: arrays, but also an object
    // made with Object.create(Array.prototype) and the typed arrays' own prototypes.
    for (let i = 0; i < heapN; i++) {
      const o = a1[i];
      if (apply(H.wmGet, H.known, [o]) === undefined) setKind(o, H.isArray(o) ? K_ARRAY : K_BAD);
    }
    // typed arrays: those found under a name (queryObjects does not list them)
    const typedList = H.named;
    const typedN = typedList.length;
    const rows = a3.rows;
    const cols = a3.cols;
    const flatLens = a3.flat;
    const isFlatLen = (L) => {
      for (let i = 0; i < flatLens.length; i++) if (flatLens[i] === L) return true;
      return false;
    };
    const found = arr();
    let worst = -1;
    const consider = (cand) => {
      // keep the best MAX_BOARDS by score (no Array.prototype.sort: it may be replaced)
      if (found.length < MAX_BOARDS) {
        push(found, cand);
        return;
      }
      let wi = 0;
      for (let i = 1; i < found.length; i++) if (found[i].score < found[wi].score) wi = i;
      if (cand.score > found[wi].score) found[wi] = cand;
    };
    const scanList = (list, n, k) => {
      for (let i = 0; i < n; i++) {
        const o = list[i];
        if (kindOf(o) !== k) continue; // ours (K_BAD) or a stale entry
        const L = lengthOf(o, k);
        const paths = apply(H.wmGet, H.pathOf, [o]);
        const named = paths !== undefined;
        const path = named ? paths : arr();
        if (k === K_ARRAY && L >= 4 && L <= 60) {
          const shape = gridShape(o, k, 4, 60, 4, 40);
          if (shape !== null) {
            const cells = cellKinds(o, shape);
            if (cells !== null) {
              let score = fit(shape.R, shape.C, rows, cols) + (named ? 20 : 0);
              if (cells.nested) score -= 5;
              consider({
                __proto__: null,
                obj: o,
                path,
                layout: "rows",
                R: shape.R,
                C: shape.C,
                rowKind: shape.rowKind === "s" ? "string" : shape.rowKind === K_TYPED ? "typed" : "array",
                cells: cells.types,
                objectCells: cells.objects,
                score,
              });
              continue;
            }
          }
        }
        if (isFlatLen(L)) {
          const cells = flatKinds(o, k, L);
          if (cells !== null) {
            const width = L % cols === 0 ? cols : L % 10 === 0 ? 10 : L;
            let score = fit(L / width, width, rows, cols) - 12 + (named ? 20 : 0);
            if (cells.distinct < 2) score -= 4; // still blank: maybe the board, maybe not
            consider({
              __proto__: null,
              obj: o,
              path,
              layout: "flat",
              R: L / width,
              C: width,
              rowKind: k === K_TYPED ? "typed" : "array",
              cells: cells.types,
              objectCells: cells.objects,
              score,
            });
          }
        }
      }
    };
    scanList(a1, heapN, K_ARRAY);
    scanList(typedList, typedN, K_TYPED);
    // best first (insertion sort of at most MAX_BOARDS)
    for (let i = 1; i < found.length; i++) {
      const c = found[i];
      let j = i - 1;
      while (j >= 0 && found[j].score < c.score) {
        found[j + 1] = found[j];
        j--;
      }
      found[j + 1] = c;
    }
    H.boards = arr();
    const out = arr();
    for (let i = 0; i < found.length; i++) {
      const f = found[i];
      push(H.boards, {
        __proto__: null,
        obj: f.obj,
        paths: f.path,
        primary: f.path.length ? 0 : -1,
        settled: f.path.length < 2,
        layout: f.layout,
        R: f.R,
        C: f.C,
        dict: newDict(),
        mode: 0,
      });
      push(out, {
        __proto__: null,
        path: f.path,
        layout: f.layout,
        rows: f.R,
        cols: f.C,
        row_kind: f.rowKind,
        cells: f.cells,
        object_cells: f.objectCells,
        score: f.score,
      });
    }
    // the active piece's shape: small matrices or cell lists found under a name
    H.shapes = arr();
    const shapesOut = arr();
    const sp = a4.shapes;
    for (let i = 0; i < sp.length && H.shapes.length < MAX_SHAPES; i++) {
      H.pending = arr();
      const o = resolve(H.paths[sp[i]], arr());
      const k = usable(o);
      if (k !== K_ARRAY && k !== K_TYPED) continue;
      const n = lengthOf(o, k);
      if (n < 1 || n > 5 || k !== K_ARRAY) continue;
      const shape = gridShape(o, k, 1, 5, 1, 5);
      if (shape !== null) {
        const cells = cellKinds(o, shape);
        if (cells === null || cells.objects > 0) continue;
        push(H.shapes, { __proto__: null, obj: o, path: sp[i], layout: "rows", R: shape.R, C: shape.C, dict: newDict(), mode: 0 });
        push(shapesOut, { __proto__: null, path: sp[i], layout: "matrix", rows: shape.R, cols: shape.C, cells: cells.types });
        continue;
      }
      // a list of [x, y] pairs (the piece's cells)
      let pairs = n >= 1 && n <= 8;
      for (let j = 0; j < n && pairs; j++) {
        const e = data(o, j);
        const ek = isObj(e) ? kindOf(e) : undefined;
        if (ek !== K_ARRAY || e.length !== 2 || typeof data(e, 0) !== "number" || typeof data(e, 1) !== "number") pairs = false;
      }
      if (pairs) {
        push(H.shapes, { __proto__: null, obj: o, path: sp[i], layout: "pairs", R: n, C: 2, dict: newDict(), mode: 0 });
        push(shapesOut, { __proto__: null, path: sp[i], layout: "pairs", rows: n, cols: 2, cells: "number" });
      }
    }
    H.pending = null;
    return { __proto__: null, boards: out, shapes: shapesOut, heap_arrays: a1.length, named_typed: typedN };
  }

  if (op === "scalars") {
    // a1: [{path, key}] the scalars to re-read each sample (owner path + key)
    H.scalars = a1;
    return a1.length;
  }

  if (op === "mode") {
    // a1: board index, a2: cell mode (0 identity, 1 own data, a name: that property)
    const b = H.boards[a1];
    b.mode = a2;
    b.dict = newDict();
    return true;
  }

  const readGrid = (b, o, out) => {
    const k = usable(o);
    if (k !== K_ARRAY && k !== K_TYPED) return null;
    if (b.layout === "pairs") {
      const n = lengthOf(o, k);
      const rows = arr();
      for (let j = 0; j < n && j < 8; j++) {
        const e = data(o, j);
        if (usable(e) !== K_ARRAY) return null;
        const x = data(e, 0);
        const y = data(e, 1);
        if (typeof x !== "number" || typeof y !== "number") return null;
        push(rows, "" + x + "," + y);
      }
      return rows;
    }
    if (b.layout === "flat") {
      const L = lengthOf(o, k);
      if (L > 2400) return null;
      const rows = arr();
      let line = "";
      for (let i = 0; i < L; i++) {
        const v = at(o, k, i);
        line += v === MISSING ? "?" : cellCode(v, b.dict, b.mode);
        if ((i + 1) % b.C === 0 || i === L - 1) {
          push(rows, line);
          line = "";
        }
      }
      return rows;
    }
    const R = lengthOf(o, k);
    if (k !== K_ARRAY || R > 64) return null;
    const rows = arr();
    let complete = true;
    for (let r = 0; r < R; r++) {
      const row = data(o, r);
      let rk;
      if (typeof row === "string") rk = "s";
      else {
        // an unknown row goes on the pending list; the others are looked at too, so
        // that one check by CDP covers every new row
        rk = usable(row);
        if (rk !== K_ARRAY && rk !== K_TYPED) {
          complete = false;
          continue;
        }
      }
      const C = rk === "s" ? row.length : lengthOf(row, rk);
      let line = "";
      for (let c = 0; c < C && c < 64; c++) {
        const v = at(row, rk, c);
        line += v === MISSING ? "?" : cellCode(v, b.dict, b.mode);
      }
      push(rows, line);
    }
    return complete ? rows : null;
  };

  if (op === "sample") {
    // a1: kinds of the closure variables read this time by CDP (rest: their values).
    const scopeRoots = rest;
    for (let i = 0; i < rest.length; i++) if (isObj(rest[i]) && kindOf(rest[i]) === undefined) setKind(rest[i], a1[i]);
    H.pending = arr();
    const boards = arr();
    const moved = arr();
    for (let i = 0; i < H.boards.length; i++) {
      const b = H.boards[i];
      let o = b.obj;
      // Until one of its names gets a new array, each is watched; that one is followed
      // from then on (immutable updates, a restart).
      const first = b.settled ? b.primary : 0;
      const last = b.settled ? b.primary + 1 : b.paths.length;
      for (let j = first; j >= 0 && j < last; j++) {
        const now = resolve(H.paths[b.paths[j]], scopeRoots);
        if (now === MISSING || !isObj(now) || now === o) continue;
        const k = usable(now);
        if (k === K_ARRAY || k === K_TYPED) {
          o = now;
          b.obj = now;
          if (!b.settled || b.primary !== j) push(moved, i * 8 + j);
          b.primary = j;
          b.settled = true;
          break;
        }
      }
      push(boards, readGrid(b, o));
    }
    const shapes = arr();
    for (let i = 0; i < H.shapes.length; i++) {
      const s = H.shapes[i];
      let o = s.obj;
      const now = resolve(H.paths[s.path], scopeRoots);
      if (now !== MISSING && isObj(now)) {
        const k = usable(now);
        if (k === K_ARRAY) {
          o = now;
          s.obj = now;
        }
      }
      push(shapes, readGrid(s, o));
    }
    const scalars = arr();
    const S = H.scalars || arr();
    for (let i = 0; i < S.length; i++) {
      const s = S[i];
      let got = MISSING;
      if (s.key === null) got = resolve(H.paths[s.path], scopeRoots);
      else {
        const owner = resolve(H.paths[s.path], scopeRoots);
        if (owner !== MISSING && usable(owner) >= 0) got = data(owner, s.key);
      }
      let v = null;
      {
        const t = typeof got;
        if (t === "number") v = got === got && got !== Infinity && got !== -Infinity ? got : null;
        else if (t === "boolean") v = got;
        else if (t === "string") v = got.length > MAX_STR ? cut(got) : got;
      }
      push(scalars, v);
    }
    const legends = arr();
    for (let i = 0; i < H.boards.length; i++) push(legends, H.boards[i].dict.n);
    return { __proto__: null, boards, shapes, scalars, moved, pending: H.pending.length, dicts: legends };
  }

  if (op === "fns") return H.fns;
  if (op === "setfns") {
    H.fns = rest; // listener functions whose closures hold state (read again by CDP)
    return rest.length;
  }
  if (op === "pending") return H.pending; // by reference: CDP tells the Python side what each is

  if (op === "legend") {
    const out = arr();
    for (let i = 0; i < H.boards.length; i++) push(out, H.boards[i].dict.legend);
    return out;
  }

  return null;
}
