/**
 * Go's filepath.Match on Linux, which Fleet uses for GitRepo `paths` (through filepath.Glob) and for
 * `.fleetignore` lines: `*` any run of characters but `/`, `?` one character but `/`, `[...]` a class
 * (ranges, `^` negates), `\` escapes. Written here rather than compiled to a regular expression: the
 * patterns come from GitRepo content, and a regex of many stars backtracks exponentially (a
 * `.fleetignore` line `*a*a*a*a*a*a*a*a*a*a*ab` held the runner forever with picomatch). This matches
 * like Go's: each star's chunk at its leftmost place, so the cost is at most pattern x name.
 *
 * A pattern is parsed once (compileGoPattern) and then matched against many names: parsing a 16 MiB
 * `.fleetignore` line again for every file cost 0.25 s per file. Whether Go reports a pattern as
 * malformed depends on the pattern alone (Go parses every chunk it reaches to its end, and on a
 * mismatch the rest too), so a malformed one is refused at compile time and matches nothing.
 * test/unit/go-glob.test.ts compares it with Go's own function.
 */

/** Thrown for what Go reports as filepath.ErrBadPattern. */
export class BadPattern extends Error {
  constructor(readonly pattern: string) {
    super(`syntax error in pattern ${JSON.stringify(pattern)}`);
  }
}

/** Work done matching: one step per chunk tried and per character compared. */
export interface StepMeter {
  steps: number;
}

type Token = { lit: string } | { any: true } | { negated: boolean; ranges: [lo: number, hi: number][] };

/** A run of tokens after its stars (`star`: it had at least one). */
interface Chunk {
  star: boolean;
  tokens: Token[];
}

export class GoPattern {
  /** The name it matches when it has no wildcard (one literal chunk), for a set lookup. */
  readonly literal: string | undefined;

  constructor(
    readonly source: string,
    private readonly chunks: Chunk[],
  ) {
    const only = chunks.length === 1 && !chunks[0].star ? chunks[0].tokens : undefined;
    this.literal = only?.every((t) => "lit" in t) ? only.map((t) => (t as { lit: string }).lit).join("") : undefined;
  }

  matches(name: string): boolean {
    return this.matchesChars([...name]);
  }

  /**
   * As matches, on the name's code points (split once by a caller matching many patterns); `meter`
   * counts the characters compared, for a caller that bounds them.
   */
  matchesChars(s: string[], meter: StepMeter = { steps: 0 }): boolean {
    let si = 0;
    for (let ci = 0; ci < this.chunks.length; ci++) {
      const { star, tokens } = this.chunks[ci];
      const last = ci === this.chunks.length - 1;
      if (star && tokens.length === 0) return !s.slice(si).includes("/");
      let at = matchTokens(tokens, s, si, meter);
      if (at !== undefined && (at === s.length || !last)) {
        si = at;
        continue;
      }
      if (!star) return false;
      let found = false;
      // A chunk needs a character per token: starts too near the end cannot match.
      for (let i = si; i < s.length - tokens.length && s[i] !== "/"; i++) {
        at = matchTokens(tokens, s, i + 1, meter);
        if (at === undefined || (last && at < s.length)) continue;
        si = at;
        found = true;
        break;
      }
      if (!found) return false;
    }
    return si === s.length;
  }
}

/**
 * The pattern parsed, as Go parses it; a malformed one throws BadPattern. With `longestName`, a pattern
 * that needs more characters than that matches nothing, and its parse stops there (a file name has at
 * most 255 bytes: a 16 MiB `.fleetignore` line is not worth parsing to its end).
 */
export function compileGoPattern(pattern: string, longestName = Infinity): GoPattern {
  const p = [...pattern];
  const chunks: Chunk[] = [];
  let needs = 0;
  let pi = 0;
  while (pi < p.length) {
    let star = false;
    while (pi < p.length && p[pi] === "*") {
      star = true;
      pi++;
    }
    const end = chunkEndOf(p, pi);
    const tokens = parseChunk(p, pi, end, pattern, longestName - needs);
    if (!tokens) return NEVER;
    needs += tokens.length;
    chunks.push({ star, tokens });
    pi = end;
  }
  return new GoPattern(pattern, chunks);
}

/** A pattern no name can match (a class that matches nothing, as a stand-in's source). */
const NEVER = new GoPattern("", [{ star: false, tokens: [{ negated: true, ranges: [[0, 0x10ffff]] }] }]);

/** Whether `name` matches `pattern`, as Go's filepath.Match; a malformed pattern throws BadPattern. */
export function goMatch(pattern: string, name: string): boolean {
  return compileGoPattern(pattern).matches(name);
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

/**
 * p[from, end) (no unescaped star outside a class) as tokens, read as Go's matchChunk reads it;
 * undefined when it has more than `most` tokens.
 */
function parseChunk(p: string[], from: number, end: number, pattern: string, most: number): Token[] | undefined {
  const chunk = p.slice(from, end);
  const tokens: Token[] = [];
  let ci = 0;
  while (ci < chunk.length) {
    if (tokens.length >= most) return undefined;
    const c = chunk[ci];
    if (c === "[") {
      ci++;
      let negated = false;
      if (chunk[ci] === "^") {
        negated = true;
        ci++;
      }
      const ranges: [number, number][] = [];
      for (;;) {
        if (chunk[ci] === "]" && ranges.length > 0) {
          ci++;
          break;
        }
        let lo: string;
        [lo, ci] = classChar(chunk, ci, pattern);
        let hi = lo;
        if (chunk[ci] === "-") [hi, ci] = classChar(chunk, ci + 1, pattern);
        ranges.push([lo.codePointAt(0)!, hi.codePointAt(0)!]);
      }
      tokens.push({ negated, ranges });
    } else if (c === "?") {
      tokens.push({ any: true });
      ci++;
    } else {
      if (c === "\\") {
        ci++;
        if (ci >= chunk.length) throw new BadPattern(pattern);
      }
      tokens.push({ lit: chunk[ci] });
      ci++;
    }
  }
  return tokens;
}

/** The index after the tokens matched at s[si...], or undefined; stops at the first mismatch. */
function matchTokens(tokens: Token[], s: string[], si: number, meter: StepMeter): number | undefined {
  meter.steps++;
  if (s.length - si < tokens.length) return undefined;
  for (const t of tokens) {
    meter.steps++;
    const ch = s[si++];
    if ("lit" in t) {
      if (ch !== t.lit) return undefined;
    } else if ("any" in t) {
      if (ch === "/") return undefined;
    } else {
      const code = ch.codePointAt(0)!;
      if (t.ranges.some(([lo, hi]) => lo <= code && code <= hi) === t.negated) return undefined;
    }
  }
  return si;
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
