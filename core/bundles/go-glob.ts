/**
 * Go's filepath.Match on Linux, which Fleet uses for GitRepo `paths` (through filepath.Glob) and for
 * `.fleetignore` lines: `*` any run of characters but `/`, `?` one character but `/`, `[...]` a class
 * (ranges, `^` negates), `\` escapes. Written here rather than compiled to a regular expression: the
 * patterns come from GitRepo content, and a regex of many stars backtracks exponentially (a
 * `.fleetignore` line `*a*a*a*a*a*a*a*a*a*a*ab` held the runner forever with picomatch). This matches
 * like Go's: each star's chunk at its leftmost place, so the cost is at most pattern x name.
 * test/unit/go-glob.test.ts compares it with Go's own function.
 */

/** Thrown for what Go reports as filepath.ErrBadPattern. */
export class BadPattern extends Error {
  constructor(readonly pattern: string) {
    super(`syntax error in pattern ${JSON.stringify(pattern)}`);
  }
}

/** Whether `name` matches `pattern`, as Go's filepath.Match; a malformed pattern throws BadPattern. */
export function goMatch(pattern: string, name: string): boolean {
  const p = [...pattern];
  const s = [...name];
  let pi = 0;
  let si = 0;
  while (pi < p.length) {
    let star = false;
    while (pi < p.length && p[pi] === "*") {
      star = true;
      pi++;
    }
    const chunkEnd = chunkEndOf(p, pi);
    const chunk = p.slice(pi, chunkEnd);
    pi = chunkEnd;
    const last = pi === p.length;
    if (star && chunk.length === 0) {
      return !s.slice(si).includes("/");
    }
    let at = matchChunk(chunk, s, si, pattern);
    if (at !== undefined && (at === s.length || !last)) {
      si = at;
      continue;
    }
    let found = false;
    if (star) {
      for (let i = si; i < s.length && s[i] !== "/"; i++) {
        at = matchChunk(chunk, s, i + 1, pattern);
        if (at === undefined || (last && at < s.length)) continue;
        si = at;
        found = true;
        break;
      }
    }
    if (!found) {
      checkRest(p, pi, pattern);
      return false;
    }
  }
  return si === s.length;
}

/** Where the chunk starting at `from` ends: at the next `*` outside a class. */
function chunkEndOf(p: string[], from: number): number {
  let inClass = false;
  for (let i = from; i < p.length; i++) {
    if (p[i] === "\\") {
      if (i + 1 < p.length) i++;
    } else if (p[i] === "[") {
      inClass = true;
    } else if (p[i] === "]") {
      inClass = false;
    } else if (p[i] === "*" && !inClass) {
      return i;
    }
  }
  return p.length;
}

/** A failed match still reports a malformed remainder, as Go does. */
function checkRest(p: string[], from: number, pattern: string): void {
  let pi = from;
  while (pi < p.length) {
    while (pi < p.length && p[pi] === "*") pi++;
    const end = chunkEndOf(p, pi);
    matchChunk(p.slice(pi, end), [], 0, pattern);
    pi = end;
  }
}

/**
 * Matches one chunk (no unescaped star) at s[si...]: the index after it, or undefined. The whole chunk
 * is read even after a mismatch, so a malformed one always throws.
 */
function matchChunk(chunk: string[], s: string[], si: number, pattern: string): number | undefined {
  let failed = false;
  let ci = 0;
  while (ci < chunk.length) {
    if (!failed && si >= s.length) failed = true;
    const c = chunk[ci];
    if (c === "[") {
      const ch = failed ? "" : s[si++];
      ci++;
      let negated = false;
      if (chunk[ci] === "^") {
        negated = true;
        ci++;
      }
      let matched = false;
      let ranges = 0;
      for (;;) {
        if (chunk[ci] === "]" && ranges > 0) {
          ci++;
          break;
        }
        let lo: string;
        [lo, ci] = classChar(chunk, ci, pattern);
        let hi = lo;
        if (chunk[ci] === "-") [hi, ci] = classChar(chunk, ci + 1, pattern);
        if (!failed && lo.codePointAt(0)! <= ch.codePointAt(0)! && ch.codePointAt(0)! <= hi.codePointAt(0)!) matched = true;
        ranges++;
      }
      if (matched === negated) failed = true;
    } else if (c === "?") {
      if (!failed && s[si++] === "/") failed = true;
      ci++;
    } else {
      let literal = c;
      if (c === "\\") {
        ci++;
        if (ci >= chunk.length) throw new BadPattern(pattern);
        literal = chunk[ci];
      }
      if (!failed && s[si++] !== literal) failed = true;
      ci++;
    }
  }
  return failed ? undefined : si;
}

/** One character of a class at chunk[ci] (escapes allowed): it and the index after it. */
function classChar(chunk: string[], ci: number, pattern: string): [string, number] {
  if (ci >= chunk.length || chunk[ci] === "-" || chunk[ci] === "]") throw new BadPattern(pattern);
  if (chunk[ci] === "\\") {
    ci++;
    if (ci >= chunk.length) throw new BadPattern(pattern);
  }
  const ch = chunk[ci];
  if (ci + 1 >= chunk.length) throw new BadPattern(pattern); // a class must be closed
  return [ch, ci + 1];
}
