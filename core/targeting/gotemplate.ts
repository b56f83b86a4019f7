/**
 * The subset of Go's text/template that Fleet applies to helm values, with `${ }` delimiters,
 * missingkey=error, and the sprig functions Fleet repositories commonly use. Anything outside the
 * subset is a clear error naming the expression: never a silently different value.
 */
import * as YAML from "yaml";
import { createHash } from "node:crypto";

export class TemplateError extends Error {}

// ---------------------------------------------------------------- lexing
type Tok =
  | { t: "field"; v: string[] } // .A.B ; [] is "."
  | { t: "var"; v: string; fields: string[] }
  | { t: "ident"; v: string }
  | { t: "str"; v: string }
  | { t: "num"; v: number }
  | { t: "bool"; v: boolean }
  | { t: "nil" }
  | { t: "punct"; v: "(" | ")" | "|" | ":=" | "=" | "," };

function lexAction(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const fieldChain = (): string[] => {
    const parts: string[] = [];
    while (src[i] === "." && /[A-Za-z_]/.test(src[i + 1] ?? "")) {
      i++;
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      parts.push(m[0]);
      i += m[0].length;
    }
    return parts;
  };
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === "(" || c === ")" || c === "|" || c === ",") { toks.push({ t: "punct", v: c }); i++; continue; }
    if (src.startsWith(":=", i)) { toks.push({ t: "punct", v: ":=" }); i += 2; continue; }
    if (c === "=") { toks.push({ t: "punct", v: "=" }); i++; continue; }
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
      if (j >= src.length) throw new TemplateError("unterminated quoted string");
      toks.push({ t: "str", v: JSON.parse(src.slice(i, j + 1)) });
      i = j + 1;
      continue;
    }
    if (c === "`") {
      const j = src.indexOf("`", i + 1);
      if (j < 0) throw new TemplateError("unterminated raw string");
      toks.push({ t: "str", v: src.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    if (c === ".") {
      if (/[A-Za-z_]/.test(src[i + 1] ?? "")) toks.push({ t: "field", v: fieldChain() });
      else { toks.push({ t: "field", v: [] }); i++; }
      continue;
    }
    if (c === "$") {
      const m = /^\$[A-Za-z0-9_]*/.exec(src.slice(i))!;
      i += m[0].length;
      toks.push({ t: "var", v: m[0], fields: fieldChain() });
      continue;
    }
    const num = /^-?(0x[0-9a-fA-F]+|\d+(\.\d+)?([eE][-+]?\d+)?)/.exec(src.slice(i));
    if (num && (c === "-" || /\d/.test(c))) { toks.push({ t: "num", v: Number(num[0]) }); i += num[0].length; continue; }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) {
      i += id[0].length;
      if (id[0] === "true" || id[0] === "false") toks.push({ t: "bool", v: id[0] === "true" });
      else if (id[0] === "nil") toks.push({ t: "nil" });
      else toks.push({ t: "ident", v: id[0] });
      continue;
    }
    throw new TemplateError(`unexpected character ${JSON.stringify(c)} in action`);
  }
  return toks;
}

// ---------------------------------------------------------------- parsing
type Operand =
  | { k: "field"; path: string[] }
  | { k: "var"; name: string; path: string[] }
  | { k: "lit"; v: unknown }
  | { k: "call"; fn: string }
  | { k: "sub"; pipe: Pipeline; path: string[] };
interface Command { args: Operand[] }
interface Pipeline { decl?: string; assign?: boolean; cmds: Command[] }
type Node =
  | { k: "text"; v: string }
  | { k: "action"; pipe: Pipeline; src: string }
  | { k: "if" | "with"; pipe: Pipeline; body: Node[]; else: Node[]; src: string }
  | { k: "range"; pipe: Pipeline; keyVar?: string; valVar?: string; body: Node[]; else: Node[]; src: string };

interface RawAction { src: string; toks: Tok[] }

function splitTemplate(text: string): (string | RawAction)[] {
  const out: (string | RawAction)[] = [];
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf("${", i);
    if (start < 0) { out.push(text.slice(i)); break; }
    let before = text.slice(i, start);
    let j = start + 2;
    if (text[j] === "-" && /\s/.test(text[j + 1] ?? "")) { before = before.replace(/\s+$/, ""); j += 1; }
    out.push(before);
    // find the closing "}" outside string literals
    let k = j;
    let inStr: string | null = null;
    for (; k < text.length; k++) {
      const ch = text[k];
      if (inStr) {
        if (inStr === '"' && ch === "\\") k++;
        else if (ch === inStr) inStr = null;
      } else if (ch === '"' || ch === "`") inStr = ch;
      else if (ch === "}") break;
    }
    if (k >= text.length) throw new TemplateError(`unclosed action starting at ${JSON.stringify(text.slice(start, start + 30))}`);
    let body = text.slice(j, k);
    let trimAfter = false;
    if (/\s-$/.test(body)) { body = body.slice(0, -1); trimAfter = true; }
    const src = "${" + text.slice(j, k) + "}";
    if (/^\s*\/\*[\s\S]*\*\/\s*$/.test(body)) { /* comment */ } else out.push({ src, toks: lexAction(body) });
    i = k + 1;
    if (trimAfter) while (i < text.length && /\s/.test(text[i])) i++;
  }
  return out;
}

class Parser {
  private pos = 0;
  constructor(private readonly items: (string | RawAction)[]) {}

  parse(): Node[] {
    const { nodes, end } = this.list();
    if (end) throw new TemplateError(`unexpected ${end.src}`);
    return nodes;
  }

  private list(): { nodes: Node[]; end?: RawAction; endKind?: "end" | "else" } {
    const nodes: Node[] = [];
    while (this.pos < this.items.length) {
      const item = this.items[this.pos++];
      if (typeof item === "string") { if (item) nodes.push({ k: "text", v: item }); continue; }
      const first = item.toks[0];
      if (!first) throw new TemplateError(`empty action ${item.src}`);
      if (first.t === "ident" && (first.v === "end" || first.v === "else")) return { nodes, end: item, endKind: first.v };
      if (first.t === "ident" && (first.v === "if" || first.v === "with" || first.v === "range")) {
        nodes.push(this.control(first.v, item, item.toks.slice(1)));
        continue;
      }
      if (first.t === "ident" && ["define", "template", "block", "break", "continue"].includes(first.v)) {
        throw new TemplateError(`"${first.v}" is not supported in ${item.src}`);
      }
      nodes.push({ k: "action", pipe: parsePipeline(item.toks, item.src), src: item.src });
    }
    return { nodes };
  }

  private control(kind: "if" | "with" | "range", item: RawAction, toks: Tok[]): Node {
    let keyVar: string | undefined;
    let valVar: string | undefined;
    if (kind === "range") {
      const declAt = toks.findIndex((t) => t.t === "punct" && t.v === ":=");
      if (declAt > 0) {
        const vars = toks.slice(0, declAt).filter((t) => t.t === "var") as { v: string }[];
        if (vars.length === 2) [keyVar, valVar] = [vars[0].v, vars[1].v];
        else valVar = vars[0]?.v;
        toks = toks.slice(declAt + 1);
      }
    }
    const pipe = parsePipeline(toks, item.src);
    const body = this.list();
    if (!body.end) throw new TemplateError(`missing end for ${item.src}`);
    let elseNodes: Node[] = [];
    if (body.endKind === "else") {
      const rest = body.end.toks.slice(1);
      if (rest.length > 0 && rest[0].t === "ident" && (rest[0].v === "if" || rest[0].v === "with")) {
        // "else if" chains: the nested control consumes the shared end.
        elseNodes = [this.control(rest[0].v as "if" | "with", body.end, rest.slice(1))];
      } else {
        const e = this.list();
        if (!e.end || e.endKind !== "end") throw new TemplateError(`missing end for ${item.src}`);
        elseNodes = e.nodes;
      }
    }
    if (kind === "range") return { k: "range", pipe, keyVar, valVar, body: body.nodes, else: elseNodes, src: item.src };
    return { k: kind, pipe, body: body.nodes, else: elseNodes, src: item.src };
  }
}

function parsePipeline(toks: Tok[], src: string): Pipeline {
  const pipe: Pipeline = { cmds: [] };
  let i = 0;
  if (toks.length >= 2 && toks[0].t === "var" && toks[1].t === "punct" && (toks[1].v === ":=" || toks[1].v === "=")) {
    pipe.decl = toks[0].v;
    pipe.assign = toks[1].v === "=";
    i = 2;
  }
  let cmd: Command = { args: [] };
  const operand = (): Operand => {
    const t = toks[i++];
    switch (t.t) {
      case "field": return { k: "field", path: t.v };
      case "var": return { k: "var", name: t.v, path: t.fields };
      case "str": return { k: "lit", v: t.v };
      case "num": return { k: "lit", v: t.v };
      case "bool": return { k: "lit", v: t.v };
      case "nil": return { k: "lit", v: null };
      case "ident": return { k: "call", fn: t.v };
      case "punct":
        if (t.v === "(") {
          let depth = 1;
          const start = i;
          while (i < toks.length && depth > 0) {
            const x = toks[i++];
            if (x.t === "punct" && x.v === "(") depth++;
            if (x.t === "punct" && x.v === ")") depth--;
          }
          if (depth !== 0) throw new TemplateError(`unbalanced parentheses in ${src}`);
          const inner = parsePipeline(toks.slice(start, i - 1), src);
          const next = toks[i];
          const path = next && next.t === "field" ? (i++, next.v) : [];
          return { k: "sub", pipe: inner, path };
        }
        throw new TemplateError(`unexpected "${t.v}" in ${src}`);
    }
  };
  while (i < toks.length) {
    const t = toks[i];
    if (t.t === "punct" && t.v === "|") {
      if (cmd.args.length === 0) throw new TemplateError(`missing command before | in ${src}`);
      pipe.cmds.push(cmd);
      cmd = { args: [] };
      i++;
      continue;
    }
    cmd.args.push(operand());
  }
  if (cmd.args.length === 0) throw new TemplateError(`missing value in ${src}`);
  pipe.cmds.push(cmd);
  return pipe;
}

// ---------------------------------------------------------------- evaluation
type Scope = Map<string, unknown>[];

class Evaluator {
  constructor(private readonly root: unknown) {}

  run(nodes: Node[], dot: unknown, scope: Scope): string {
    let out = "";
    for (const n of nodes) {
      switch (n.k) {
        case "text": out += n.v; break;
        case "action": {
          const v = this.pipeline(n.pipe, dot, scope, n.src);
          if (!n.pipe.decl) out += printValue(v);
          break;
        }
        case "if": case "with": {
          const v = this.pipeline(n.pipe, dot, scope, n.src);
          const inner: Scope = [...scope, new Map()];
          if (truth(v)) out += this.run(n.body, n.k === "with" ? v : dot, inner);
          else out += this.run(n.else, dot, inner);
          break;
        }
        case "range": {
          const v = this.pipeline(n.pipe, dot, scope, n.src);
          const entries: [unknown, unknown][] = Array.isArray(v)
            ? v.map((x, i) => [i, x])
            : isMap(v) ? Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])
            : v === null || v === undefined ? []
            : typeof v === "number" ? Array.from({ length: v }, (_, i) => [i, i])
            : (() => { throw new TemplateError(`range can't iterate over ${printValue(v)} in ${n.src}`); })();
          if (entries.length === 0) { out += this.run(n.else, dot, [...scope, new Map()]); break; }
          for (const [k, x] of entries) {
            const frame = new Map<string, unknown>();
            if (n.keyVar) frame.set(n.keyVar, k);
            if (n.valVar) frame.set(n.valVar, x);
            out += this.run(n.body, x, [...scope, frame]);
          }
          break;
        }
      }
    }
    return out;
  }

  private pipeline(p: Pipeline, dot: unknown, scope: Scope, src: string): unknown {
    let value: unknown;
    let first = true;
    for (const cmd of p.cmds) {
      value = this.command(cmd, dot, scope, src, first ? undefined : { v: value });
      first = false;
    }
    if (p.decl) {
      if (p.assign) {
        const frame = [...scope].reverse().find((f) => f.has(p.decl!));
        if (!frame) throw new TemplateError(`undefined variable ${p.decl} in ${src}`);
        frame.set(p.decl, value);
      } else {
        scope[scope.length - 1].set(p.decl, value);
      }
    }
    return value;
  }

  private command(cmd: Command, dot: unknown, scope: Scope, src: string, piped?: { v: unknown }): unknown {
    const [head, ...rest] = cmd.args;
    if (head.k === "call") {
      const args = rest.map((a) => this.operand(a, dot, scope, src));
      if (piped) args.push(piped.v);
      return callFunction(head.fn, args, src);
    }
    if (rest.length > 0 || piped) throw new TemplateError(`can't give arguments to a non-function in ${src}`);
    return this.operand(head, dot, scope, src);
  }

  private operand(o: Operand, dot: unknown, scope: Scope, src: string): unknown {
    switch (o.k) {
      case "lit": return o.v;
      case "field": return walkPath(dot, o.path, src);
      case "var": {
        let base: unknown;
        if (o.name === "$") base = this.root;
        else {
          const frame = [...scope].reverse().find((f) => f.has(o.name));
          if (!frame) throw new TemplateError(`undefined variable ${o.name} in ${src}`);
          base = frame.get(o.name);
        }
        return walkPath(base, o.path, src);
      }
      case "call": return callFunction(o.fn, [], src);
      case "sub": return walkPath(this.pipeline(o.pipe, dot, scope, src), o.path, src);
    }
  }
}

function walkPath(value: unknown, path: string[], src: string): unknown {
  let v = value;
  for (const key of path) {
    if (!isMap(v)) throw new TemplateError(`can't evaluate field ${key} of ${v === null || v === undefined ? "a missing value" : typeof v} in ${src}`);
    if (!Object.prototype.hasOwnProperty.call(v, key)) throw new TemplateError(`map has no entry for key "${key}" in ${src}`);
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Go template truth: false, 0, nil, and empty strings, lists and maps are false. */
function truth(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

/** How Go's fmt prints a value into template output. */
function printValue(v: unknown): string {
  if (v === null || v === undefined) return "<no value>";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(printValue).join(" ")}]`;
  if (isMap(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${printValue(v[k])}`).join(" ")}]`;
  return String(v);
}

function toYamlText(v: unknown): string {
  if (v === null || v === undefined) return "null";
  return YAML.stringify(v, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, "");
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === null || v === undefined ? "" : printValue(v);
}

function num(v: unknown, fn: string, src: string): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : v === null || v === undefined ? 0 : NaN;
  if (Number.isNaN(n)) throw new TemplateError(`${fn}: ${printValue(v)} is not a number in ${src}`);
  return n;
}

function compare(a: unknown, b: unknown, fn: string, src: string): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  throw new TemplateError(`${fn}: incompatible types for comparison in ${src}`);
}

function printf(format: string, args: unknown[]): string {
  let i = 0;
  return format.replace(/%([-+# 0]*\d*(?:\.\d+)?)([svdqfx%t])/g, (_m, _flags, verb: string) => {
    if (verb === "%") return "%";
    const a = args[i++];
    switch (verb) {
      case "q": return JSON.stringify(str(a));
      case "d": return String(Math.trunc(Number(a)));
      case "f": return Number(a).toFixed(6);
      case "x": return typeof a === "number" ? a.toString(16) : Buffer.from(str(a)).toString("hex");
      default: return printValue(a);
    }
  });
}

const words = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[^A-Za-z0-9]+/).filter((w) => w);

const FUNCTIONS: Record<string, (args: unknown[], src: string) => unknown> = {
  default: ([d, v]) => (truth(v) ? v : d),
  empty: ([v]) => !truth(v),
  coalesce: (args) => args.find(truth) ?? null,
  ternary: ([a, b, c]) => (c ? a : b),
  quote: (args) => args.map((a) => JSON.stringify(str(a))).join(" "),
  squote: (args) => args.map((a) => `'${str(a)}'`).join(" "),
  upper: ([s]) => str(s).toUpperCase(),
  lower: ([s]) => str(s).toLowerCase(),
  title: ([s]) => str(s).replace(/\b\w/g, (c) => c.toUpperCase()),
  trim: ([s]) => str(s).trim(),
  trimAll: ([c, s]) => str(s).replace(new RegExp(`^[${escapeRe(str(c))}]+|[${escapeRe(str(c))}]+$`, "g"), ""),
  trimPrefix: ([p, s]) => (str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : str(s)),
  trimSuffix: ([p, s]) => (str(s).endsWith(str(p)) && str(p) ? str(s).slice(0, -str(p).length) : str(s)),
  replace: ([o, n, s]) => str(s).split(str(o)).join(str(n)),
  contains: ([sub, s]) => str(s).includes(str(sub)),
  hasPrefix: ([p, s]) => str(s).startsWith(str(p)),
  hasSuffix: ([p, s]) => str(s).endsWith(str(p)),
  repeat: ([n, s], src) => str(s).repeat(num(n, "repeat", src)),
  substr: ([a, b, s], src) => str(s).slice(num(a, "substr", src), num(b, "substr", src) < 0 ? undefined : num(b, "substr", src)),
  trunc: ([n, s], src) => { const c = num(n, "trunc", src); return c >= 0 ? str(s).slice(0, c) : str(s).slice(c); },
  nospace: ([s]) => str(s).replace(/\s/g, ""),
  indent: ([n, s], src) => str(s).split("\n").map((l) => " ".repeat(num(n, "indent", src)) + l).join("\n"),
  nindent: ([n, s], src) => "\n" + str(s).split("\n").map((l) => " ".repeat(num(n, "nindent", src)) + l).join("\n"),
  toYaml: ([v]) => toYamlText(v),
  toJson: ([v]: unknown[]) => JSON.stringify(v ?? null),
  toPrettyJson: ([v]: unknown[]) => JSON.stringify(v ?? null, null, "  "),
  toString: ([v]: unknown[]) => str(v),
  toStrings: ([v]) => (Array.isArray(v) ? v.map(str) : [str(v)]),
  int: ([v], src) => Math.trunc(num(v, "int", src)),
  int64: ([v], src) => Math.trunc(num(v, "int64", src)),
  float64: ([v], src) => num(v, "float64", src),
  atoi: ([v]) => { const n = parseInt(str(v), 10); return Number.isNaN(n) ? 0 : n; },
  add: (args, src) => args.reduce<number>((a, b) => a + num(b, "add", src), 0),
  add1: ([v], src) => num(v, "add1", src) + 1,
  sub: ([a, b], src) => num(a, "sub", src) - num(b, "sub", src),
  mul: (args, src) => args.reduce<number>((a, b) => a * num(b, "mul", src), 1),
  div: ([a, b], src) => Math.trunc(num(a, "div", src) / num(b, "div", src)),
  mod: ([a, b], src) => num(a, "mod", src) % num(b, "mod", src),
  max: (args, src) => Math.max(...args.map((a) => num(a, "max", src))),
  min: (args, src) => Math.min(...args.map((a) => num(a, "min", src))),
  list: (args) => args,
  dict: (args) => { const d: Record<string, unknown> = {}; for (let i = 0; i < args.length; i += 2) d[str(args[i])] = args[i + 1] ?? ""; return d; },
  get: ([m, k]) => (isMap(m) && Object.prototype.hasOwnProperty.call(m, str(k)) ? m[str(k)] : ""),
  hasKey: ([m, k]) => isMap(m) && Object.prototype.hasOwnProperty.call(m, str(k)),
  keys: (args) => args.flatMap((m) => (isMap(m) ? Object.keys(m) : [])).sort(),
  values: ([m]) => (isMap(m) ? Object.keys(m).sort().map((k) => m[k]) : []),
  pick: ([m, ...ks]) => Object.fromEntries(ks.map(str).filter((k) => isMap(m) && k in m).map((k) => [k, (m as Record<string, unknown>)[k]])),
  omit: ([m, ...ks]) => Object.fromEntries(Object.entries(isMap(m) ? m : {}).filter(([k]) => !ks.map(str).includes(k))),
  join: ([sep, l]) => (Array.isArray(l) ? l.map(str).join(str(sep)) : str(l)),
  splitList: ([sep, s]) => str(s).split(str(sep)),
  split: ([sep, s]) => Object.fromEntries(str(s).split(str(sep)).map((p, i) => [`_${i}`, p])),
  first: ([l]) => (Array.isArray(l) && l.length ? l[0] : null),
  last: ([l]) => (Array.isArray(l) && l.length ? l[l.length - 1] : null),
  has: ([x, l]) => Array.isArray(l) && l.includes(x),
  b64enc: ([s]) => Buffer.from(str(s)).toString("base64"),
  b64dec: ([s]) => Buffer.from(str(s), "base64").toString("utf8"),
  sha256sum: ([s]) => createHash("sha256").update(str(s)).digest("hex"),
  sha1sum: ([s]) => createHash("sha1").update(str(s)).digest("hex"),
  kebabcase: ([s]) => words(str(s)).map((w) => w.toLowerCase()).join("-"),
  snakecase: ([s]) => words(str(s)).map((w) => w.toLowerCase()).join("_"),
  camelcase: ([s]) => words(str(s)).map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase()).join(""),
  printf: ([f, ...args]) => printf(str(f), args),
  print: (args) => args.map(printValue).join(""),
  println: (args) => args.map(printValue).join(" ") + "\n",
  len: ([v]) => (typeof v === "string" || Array.isArray(v) ? v.length : isMap(v) ? Object.keys(v).length : 0),
  index: ([v, ...ks], src) => ks.reduce((acc: unknown, k) => {
    if (Array.isArray(acc)) return acc[num(k, "index", src)];
    if (isMap(acc)) return acc[str(k)];
    throw new TemplateError(`index of non-collection in ${src}`);
  }, v),
  eq: ([a, ...bs]) => bs.some((b) => a === b),
  ne: ([a, b]) => a !== b,
  lt: ([a, b], src) => compare(a, b, "lt", src) < 0,
  le: ([a, b], src) => compare(a, b, "le", src) <= 0,
  gt: ([a, b], src) => compare(a, b, "gt", src) > 0,
  ge: ([a, b], src) => compare(a, b, "ge", src) >= 0,
  and: (args) => { for (const a of args) if (!truth(a)) return a; return args[args.length - 1]; },
  or: (args) => { for (const a of args) if (truth(a)) return a; return args[args.length - 1]; },
  not: ([a]) => !truth(a),
  required: ([msg, v]) => { if (!truth(v)) throw new TemplateError(str(msg)); return v; },
  fail: ([msg]) => { throw new TemplateError(str(msg)); },
};

/** Functions Fleet removes (env, expandenv, include, tpl, getHostByName) or that would redeploy on every run. */
const REFUSED: Record<string, string> = {
  env: "is disabled by Fleet", expandenv: "is disabled by Fleet", include: "is disabled by Fleet", tpl: "is disabled by Fleet",
  getHostByName: "is disabled by Fleet", now: "is not deterministic: every update would redeploy",
  uuidv4: "is not deterministic: every update would redeploy", randAlphaNum: "is not deterministic: every update would redeploy",
  randAlpha: "is not deterministic: every update would redeploy", randNumeric: "is not deterministic: every update would redeploy",
  randAscii: "is not deterministic: every update would redeploy",
};

function callFunction(fn: string, args: unknown[], src: string): unknown {
  const impl = FUNCTIONS[fn];
  if (!impl) {
    if (REFUSED[fn]) throw new TemplateError(`function "${fn}" ${REFUSED[fn]} in ${src}`);
    throw new TemplateError(`function "${fn}" is not supported by pulumi-fleet in ${src}`);
  }
  return impl(args, src);
}

function escapeRe(s: string): string {
  return s.replace(/[\]\\^-]/g, "\\$&");
}

export interface CompiledTemplate {
  render(data: unknown): string;
}

/** Parses a template with `${ }` delimiters once, to render it against many clusters. */
export function compileTemplate(text: string): CompiledTemplate {
  const nodes = new Parser(splitTemplate(text)).parse();
  return { render: (data) => new Evaluator(data).run(nodes, data, [new Map([["$", data]])]) };
}

/** Renders a template with `${ }` delimiters against `data` (missing keys are errors). */
export function renderTemplate(text: string, data: unknown): string {
  return compileTemplate(text).render(data);
}

export const SUPPORTED_FUNCTIONS = Object.keys(FUNCTIONS).sort();
