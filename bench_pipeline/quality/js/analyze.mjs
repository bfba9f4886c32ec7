// Static code analysis of a JavaScript/TypeScript project with the TypeScript parser.
//
//   node analyze.mjs FILE_LIST OUT_JSON     (QUALITY_TOOLCHAIN = folder holding node_modules)
//
// FILE_LIST has one relative path per line; OUT_JSON receives one object (see summarise()).
// The parser never throws on bad syntax (it recovers), so a broken file still gets numbers,
// and is counted in parse_errors so the reader knows how much to trust them.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const toolchain = process.env.QUALITY_TOOLCHAIN;
const require = createRequire(path.join(toolchain, "package.json"));
const ts = require("typescript");

const [listFile, outFile] = process.argv.slice(2);
const files = fs.readFileSync(listFile, "utf8").split("\n").filter(Boolean);

// Numbers so common they carry no hidden meaning.
const ALLOWED_NUMBERS = new Set([-1, 0, 1, 2]);
const CONTROL = new Set([
  ts.SyntaxKind.IfStatement,
  ts.SyntaxKind.ForStatement,
  ts.SyntaxKind.ForInStatement,
  ts.SyntaxKind.ForOfStatement,
  ts.SyntaxKind.WhileStatement,
  ts.SyntaxKind.DoStatement,
  ts.SyntaxKind.SwitchStatement,
  ts.SyntaxKind.TryStatement,
]);
// Nodes a number may sit in and still be part of a named constant's value
// (const SHAPES = [[0, 1], ...], const LEVELS = [{ gravityMs: 640 }]).
const DATA_WRAPPERS = new Set([
  ts.SyntaxKind.ArrayLiteralExpression,
  ts.SyntaxKind.ObjectLiteralExpression,
  ts.SyntaxKind.PropertyAssignment,
  ts.SyntaxKind.PrefixUnaryExpression,
  ts.SyntaxKind.ParenthesizedExpression,
  ts.SyntaxKind.AsExpression,
  ts.SyntaxKind.SatisfiesExpression,
  ts.SyntaxKind.TypeAssertionExpression,
]);

function scriptKind(file) {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".ts" || ext === ".mts" || ext === ".cts") return ts.ScriptKind.TS;
  if (ext === ".tsx") return ts.ScriptKind.TSX;
  if (ext === ".jsx") return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

function isFunctionLike(node) {
  switch (node.kind) {
    case ts.SyntaxKind.FunctionDeclaration:
    case ts.SyntaxKind.FunctionExpression:
    case ts.SyntaxKind.MethodDeclaration:
    case ts.SyntaxKind.Constructor:
    case ts.SyntaxKind.GetAccessor:
    case ts.SyntaxKind.SetAccessor:
      return node.body !== undefined;
    case ts.SyntaxKind.ArrowFunction:
      return node.body.kind === ts.SyntaxKind.Block;
    default:
      return false;
  }
}

function isConstDeclaration(decl) {
  const list = decl.parent;
  return (
    list && list.kind === ts.SyntaxKind.VariableDeclarationList && (list.flags & ts.NodeFlags.Const) !== 0
  );
}

function hasModifier(node, kind) {
  return (ts.canHaveModifiers(node) ? ts.getModifiers(node) ?? [] : []).some((m) => m.kind === kind);
}

// Is this numeric literal an unnamed ("magic") number?
function isMagic(literal) {
  const value = Number(literal.text);
  let node = literal;
  let parent = node.parent;
  const negative =
    parent.kind === ts.SyntaxKind.PrefixUnaryExpression && parent.operator === ts.SyntaxKind.MinusToken;
  if (ALLOWED_NUMBERS.has(negative ? -value : value)) return false;
  if (parent.kind === ts.SyntaxKind.LiteralType) return false; // a type, not a value
  if (parent.kind === ts.SyntaxKind.ElementAccessExpression && parent.argumentExpression === node) {
    return false; // an array index
  }
  if (parent.kind === ts.SyntaxKind.EnumMember) return false;
  while (DATA_WRAPPERS.has(parent.kind)) {
    node = parent;
    parent = parent.parent;
  }
  if (parent.kind === ts.SyntaxKind.VariableDeclaration && parent.initializer === node) {
    return !isConstDeclaration(parent);
  }
  if (parent.kind === ts.SyntaxKind.PropertyDeclaration && parent.initializer === node) {
    return !hasModifier(parent, ts.SyntaxKind.ReadonlyKeyword); // static readonly X = 10
  }
  return true;
}

// Naming style of one identifier, ignoring leading/trailing _ and $ (private markers).
function style(name) {
  const core = name.replace(/^[_$]+|[_$]+$/g, "");
  if (!core || /^[0-9]/.test(core)) return "other";
  if (/^[a-z][a-z0-9]*$/.test(core)) return "word"; // fits camelCase and snake_case alike
  if (/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(core) || /^[A-Z]{2,}[0-9]*$/.test(core)) return "upper";
  if (/^[a-z][a-z0-9]*([A-Z][a-z0-9]*)+$/.test(core)) return "camel";
  if (/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(core)) return "snake";
  if (/^[A-Z][a-zA-Z0-9]*$/.test(core)) return "pascal";
  return "other";
}

function analyseFile(rel) {
  const text = fs.readFileSync(rel, "utf8");
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, scriptKind(rel));
  const result = {
    path: rel,
    lines: text.split("\n").filter((l) => l.trim() !== "").length,
    statements: sf.statements.length,
    functions: 0,
    function_length_max: 0,
    nesting_depth_max: 0,
    magic_numbers: 0,
    parse_error: (sf.parseDiagnostics ?? []).length > 0,
    identifiers: [], // [name, kind]: kind "type" | "constant" | "function" | "value"
  };
  const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line;

  function declare(nameNode, kind) {
    if (!nameNode) return;
    if (ts.isIdentifier(nameNode) || ts.isPrivateIdentifier(nameNode)) {
      result.identifiers.push([nameNode.text.replace(/^#/, ""), kind]);
    } else if (ts.isObjectBindingPattern(nameNode) || ts.isArrayBindingPattern(nameNode)) {
      for (const element of nameNode.elements) {
        if (ts.isBindingElement(element)) declare(element.name, kind);
      }
    }
  }

  function collectNames(node) {
    switch (node.kind) {
      case ts.SyntaxKind.VariableDeclaration:
        declare(node.name, isConstDeclaration(node) ? "constant" : "value");
        break;
      case ts.SyntaxKind.FunctionDeclaration:
        declare(node.name, "function");
        break;
      case ts.SyntaxKind.Parameter:
        declare(node.name, "value");
        break;
      case ts.SyntaxKind.ClassDeclaration:
      case ts.SyntaxKind.ClassExpression:
      case ts.SyntaxKind.InterfaceDeclaration:
      case ts.SyntaxKind.TypeAliasDeclaration:
      case ts.SyntaxKind.EnumDeclaration:
        declare(node.name, "type");
        break;
      case ts.SyntaxKind.EnumMember:
        declare(node.name, "constant");
        break;
      case ts.SyntaxKind.PropertyDeclaration:
        declare(node.name, hasModifier(node, ts.SyntaxKind.ReadonlyKeyword) ? "constant" : "value");
        break;
      case ts.SyntaxKind.MethodDeclaration:
      case ts.SyntaxKind.GetAccessor:
      case ts.SyntaxKind.SetAccessor:
        declare(node.name, "value");
        break;
      default:
        break;
    }
  }

  // depth: control blocks open around this node within the current function (or module).
  function visit(node, depth) {
    collectNames(node);
    if (node.kind === ts.SyntaxKind.NumericLiteral && isMagic(node)) result.magic_numbers += 1;
    if (isFunctionLike(node)) {
      result.functions += 1;
      const length = lineOf(node.body.end) - lineOf(node.getStart(sf)) + 1;
      result.function_length_max = Math.max(result.function_length_max, length);
      ts.forEachChild(node, (child) => visit(child, 0)); // nesting counts inside one function
      return;
    }
    let inner = depth;
    // `else if` continues a chain at the same depth rather than nesting deeper.
    const elseIf =
      node.kind === ts.SyntaxKind.IfStatement &&
      node.parent.kind === ts.SyntaxKind.IfStatement &&
      node.parent.elseStatement === node;
    if (CONTROL.has(node.kind) && !elseIf) {
      inner = depth + 1;
      result.nesting_depth_max = Math.max(result.nesting_depth_max, inner);
    }
    ts.forEachChild(node, (child) => visit(child, elseIf ? depth : inner));
  }
  // An `else if` node is itself visited at the depth of its chain.
  ts.forEachChild(sf, (child) => visit(child, 0));
  return result;
}

function naming(perFile) {
  const counts = { word: 0, camel: 0, snake: 0, pascal: 0, upper: 0, other: 0 };
  const all = [];
  for (const file of perFile) {
    for (const [name, kind] of file.identifiers) {
      const s = style(name);
      counts[s] += 1;
      all.push([s, kind]);
    }
  }
  if (all.length === 0) return { consistency: null, counts, total: 0 };
  // The project's convention for ordinary names is whichever of camelCase/snake_case it uses more.
  const dominant = counts.snake > counts.camel ? "snake" : "camel";
  let consistent = 0;
  for (const [s, kind] of all) {
    if (s === "word" || s === dominant) consistent += 1;
    else if (s === "pascal" && (kind === "type" || kind === "function" || kind === "constant")) {
      consistent += 1; // classes, types, constructor functions, components
    } else if (s === "upper" && kind === "constant") consistent += 1;
  }
  return { consistency: consistent / all.length, counts, total: all.length, dominant };
}

const perFile = [];
const failures = [];
for (const rel of files) {
  try {
    perFile.push(analyseFile(rel));
  } catch (error) {
    failures.push(`${rel}: ${String(error).slice(0, 200)}`);
  }
}
const withCode = perFile.filter((f) => f.statements > 0);
const totalLines = withCode.reduce((sum, f) => sum + f.lines, 0);
const names = naming(perFile);
const summary = {
  files_analysed: perFile.length,
  failures,
  parse_errors: perFile.filter((f) => f.parse_error).length,
  function_count: perFile.reduce((sum, f) => sum + f.functions, 0),
  function_length_max: Math.max(0, ...perFile.map((f) => f.function_length_max)),
  nesting_depth_max: Math.max(0, ...perFile.map((f) => f.nesting_depth_max)),
  magic_numbers: perFile.reduce((sum, f) => sum + f.magic_numbers, 0),
  naming_consistency: names.consistency,
  naming_styles: names.counts,
  naming_dominant: names.dominant ?? null,
  identifier_count: names.total,
  modules: withCode.length,
  single_file: withCode.length === 1,
  source_lines: totalLines,
  largest_file_share: totalLines > 0 ? Math.max(...withCode.map((f) => f.lines)) / totalLines : null,
  largest_file_lines: Math.max(0, ...withCode.map((f) => f.lines)),
};
fs.writeFileSync(outFile, JSON.stringify(summary));
