/**
 * A tiny typed reader for untyped configuration, which keeps the field path it is reading, so every
 * error names the file and the exact field: `gitRepos[1].targets[0].clusterName: must be a string`.
 * Unknown keys are errors that list the valid ones: a typo must never silently drop a setting.
 */
import { FleetError, ErrorContext } from "../base/errors";

/**
 * Fleet's matching of field names, for files Fleet decodes with Go's JSON (fleet.yaml): a key that
 * differs from a field only in case is that field, a key that matches none is ignored. Each is said in
 * `warnings`; the object is rewritten in place to the canonical names.
 */
export interface FleetMatching {
  warnings: string[];
}

export class Field {
  constructor(
    readonly value: unknown,
    readonly path: string,
    readonly context: ErrorContext,
    readonly matching?: FleetMatching,
  ) {}

  fail(reason: string): never {
    throw new FleetError(reason, { ...this.context, field: this.path || undefined });
  }

  get present(): boolean {
    return this.value !== undefined && this.value !== null;
  }

  child(key: string): Field {
    const obj = this.value as Record<string, unknown> | undefined;
    const path = this.path ? `${this.path}.${key}` : key;
    return new Field(obj?.[key], path, this.context, this.matching);
  }

  /** The i-th element of a list (path `list[i]`). */
  index(i: number): Field {
    const list = this.value as unknown[] | undefined;
    return new Field(Array.isArray(list) ? list[i] : undefined, `${this.path}[${i}]`, this.context, this.matching);
  }

  /** Reads an object and rejects keys outside `allowed`. */
  object(allowed: readonly string[]): Field {
    if (!isPlainObject(this.value)) this.fail(`must be a mapping (got ${describe(this.value)})`);
    if (this.matching) return this.matchAsFleet(allowed, this.matching);
    const unknown = Object.keys(this.value as object).filter((k) => !allowed.includes(k));
    if (unknown.length > 0) {
      const field = this.path ? `${this.path}.${unknown[0]}` : unknown[0];
      throw new FleetError(`unknown field; valid fields are: ${[...allowed].sort().join(", ")}`, {
        ...this.context,
        field,
      });
    }
    return this;
  }

  /** Go's encoding/json: an exact name, else one equal but for case; the later key wins; others are ignored. */
  private matchAsFleet(allowed: readonly string[], matching: FleetMatching): Field {
    const obj = this.value as Record<string, unknown>;
    const at = (k: string) => (this.path ? `${this.path}.${k}` : k);
    const entries = Object.entries(obj);
    for (const key of Object.keys(obj)) delete obj[key];
    for (const [key, value] of entries) {
      const canonical = allowed.includes(key) ? key : allowed.find((a) => a.toLowerCase() === key.toLowerCase());
      if (canonical === undefined) {
        matching.warnings.push(`${at(key)}: unknown field, ignored as Fleet ignores it`);
        continue;
      }
      if (canonical !== key) matching.warnings.push(`${at(key)}: read as ${canonical} (Fleet matches fleet.yaml field names without regard to case)`);
      // Both spellings: the later key wins, as Go's decoder sets the field twice (fleet.yaml reaches here as
      // JSON with sorted keys, as in Fleet, so that is the order Fleet's decoder sees).
      delete obj[canonical];
      obj[canonical] = value;
    }
    return this;
  }

  items(): Field[] {
    if (!this.present) return [];
    if (!Array.isArray(this.value)) this.fail(`must be a list (got ${describe(this.value)})`);
    return (this.value as unknown[]).map((_, i) => this.index(i));
  }

  optString(): string | undefined {
    if (!this.present) return undefined;
    if (typeof this.value !== "string") this.fail(`must be a string (got ${describe(this.value)})`);
    return this.value as string;
  }

  string(): string {
    const s = this.optString();
    if (s === undefined || s === "") this.fail("is required");
    return s;
  }

  optBool(): boolean | undefined {
    if (!this.present) return undefined;
    if (typeof this.value !== "boolean") this.fail(`must be true or false (got ${describe(this.value)})`);
    return this.value as boolean;
  }

  bool(defaultValue = false): boolean {
    return this.optBool() ?? defaultValue;
  }

  /**
   * A whole number at the top level of a stack file's config: Pulumi keeps scalar config values as
   * strings (the CLI writes `5` back as `"5"` when it creates the stack), so digits as a string count,
   * exactly what the schema's configInteger accepts (field-table.ts).
   */
  optConfigNumber(): number | undefined {
    if (typeof this.value === "string" && /^[0-9]+$/.test(this.value)) return Number(this.value);
    return this.optNumber();
  }

  optNumber(): number | undefined {
    if (!this.present) return undefined;
    if (typeof this.value !== "number" || !Number.isFinite(this.value)) this.fail(`must be a number (got ${describe(this.value)})`);
    return this.value as number;
  }

  oneOf<T extends string>(options: readonly T[], defaultValue?: T): T {
    const s = this.optString();
    if (s === undefined) {
      if (defaultValue === undefined) this.fail(`is required; one of ${options.join(", ")}`);
      return defaultValue;
    }
    if (!options.includes(s as T)) this.fail(`must be one of ${options.join(", ")} (got ${JSON.stringify(s)})`);
    return s as T;
  }

  stringList(): string[] {
    return this.items().map((f) => f.string());
  }

  /** A map of string to string (labels, annotations). */
  stringMap(): Record<string, string> {
    if (!this.present) return {};
    if (!isPlainObject(this.value)) this.fail(`must be a mapping of strings (got ${describe(this.value)})`);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.value as object)) {
      if (typeof v !== "string") this.child(k).fail(`must be a string (got ${describe(v)})`);
      out[k] = v;
    }
    return out;
  }

  /** Any YAML/JSON mapping, kept as data (helm values, templateValues). */
  optMap(): Record<string, unknown> | undefined {
    if (!this.present) return undefined;
    if (!isPlainObject(this.value)) this.fail(`must be a mapping (got ${describe(this.value)})`);
    return this.value as Record<string, unknown>;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${JSON.stringify(v)}`;
}
