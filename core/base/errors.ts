/**
 * One error type for every stage, so a user always learns *where*: the stack file and field path for
 * configuration, the GitRepo for sources, and the file, bundle and cluster for bundles and targeting.
 */
export interface ErrorContext {
  file?: string;
  field?: string;
  gitRepo?: string;
  bundle?: string;
  cluster?: string;
  line?: number;
}

export class FleetError extends Error {
  readonly context: ErrorContext;
  readonly reason: string;

  constructor(reason: string, context: ErrorContext = {}) {
    super(formatMessage(reason, context));
    this.name = "FleetError";
    this.reason = reason;
    this.context = context;
  }

  /** The same error with more context added by an outer stage (inner values win). */
  within(outer: ErrorContext): FleetError {
    return new FleetError(this.reason, { ...outer, ...this.context });
  }
}

function formatMessage(reason: string, c: ErrorContext): string {
  const where: string[] = [];
  if (c.gitRepo) where.push(`gitRepo ${c.gitRepo}`);
  if (c.bundle) where.push(`bundle ${c.bundle}`);
  if (c.cluster) where.push(`cluster ${c.cluster}`);
  const location = c.file ? `${c.file}${c.line ? `:${c.line}` : ""}` : "";
  const head = [location, where.join(", ")].filter((s) => s).join(" ");
  const field = c.field ? `${c.field}: ` : "";
  return head ? `${head}: ${field}${reason}` : `${field}${reason}`;
}

/** Adds context to a FleetError, or wraps any other error as one. */
export function withContext(err: unknown, context: ErrorContext): FleetError {
  if (err instanceof FleetError) return err.within(context);
  const message = err instanceof Error ? err.message : String(err);
  return new FleetError(message, context);
}
