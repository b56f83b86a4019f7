/** Canonical forms, so one effective value always serializes to the same bytes. */

const BINARY = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL: [string, number][] = [
  ["E", 18],
  ["P", 15],
  ["T", 12],
  ["G", 9],
  ["M", 6],
  ["k", 3],
  ["", 0],
  ["m", -3],
  ["u", -6],
  ["n", -9],
];

/** A Kubernetes quantity in its shortest exact form: "0.5" -> "500m", "1024Mi" -> "1Gi", "1000m" -> "1". */
export function canonicalQuantity(q: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?([KMGTPE]i|[mkMGTPE]|n|u)?$/.exec(q.trim());
  if (!m || (m[2] === "" && !m[3])) return q;
  const [, sign, int, frac = "", exp = "0", suffix = ""] = m;
  if (suffix.endsWith("i")) {
    if (frac.replace(/0+$/, "") !== "" || exp !== "0") return q;
    let bytes = BigInt(int) * 1024n ** BigInt(BINARY.indexOf(suffix));
    let i = 0;
    while (i < BINARY.length - 1 && bytes !== 0n && bytes % 1024n === 0n) {
      bytes /= 1024n;
      i++;
    }
    return `${sign === "-" ? "-" : ""}${bytes}${BINARY[i]}`;
  }
  // Value in nano-units: digits * 10^(exponent + suffix power + 9 - fraction length).
  const power = Number(exp) + (DECIMAL.find(([s]) => s === suffix)?.[1] ?? 0) + 9 - frac.length;
  if (power < 0) {
    const digits = (int + frac).replace(/^0+/, "") || "0";
    const cut = digits.length + power;
    if (cut < 0 || /[^0]/.test(digits.slice(Math.max(cut, 0)))) return q; // finer than 1n: leave as written
  }
  const nanos = power >= 0 ? BigInt(int + frac || "0") * 10n ** BigInt(power) : BigInt((int + frac).slice(0, (int + frac).length + power) || "0");
  if (nanos === 0n) return "0";
  for (const [s, p] of DECIMAL) {
    const unit = 10n ** BigInt(p + 9);
    if (nanos % unit === 0n) return `${sign === "-" && nanos !== 0n ? "-" : ""}${nanos / unit}${s}`;
  }
  return q;
}

/** PEM with LF line endings, no trailing spaces or blank lines, one final newline. */
export function canonicalPem(pem: string): string {
  return (
    pem
      .replace(/\r\n?/g, "\n")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join("\n") + "\n"
  );
}

/** A JSON value with object keys sorted recursively (arrays keep their order). */
export function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
    ) as T;
  }
  return value;
}
