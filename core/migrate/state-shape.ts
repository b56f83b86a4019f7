/**
 * The stack's state as `pulumi stack export` gives it (the checkpoint's resources), the shape the
 * migration reads and returns. Only the fields this project reads are named; the rest pass through.
 */
export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  parent?: string;
  provider?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  retainOnDelete?: boolean | null;
}

/** An exported stack: its deployment's resources and the operations a killed update left in flight. */
export interface ExportedState {
  version?: number;
  deployment?: { resources?: StateResource[]; pending_operations?: { type: string; resource: { urn: string } }[]; [field: string]: unknown };
  [field: string]: unknown;
}

export { nameOfUrn } from "../model/keys";

/** The output under which a resource the migration left state-only keeps the provider reference it had. */
export const MOVED_FROM_PROVIDER = "pulumi-fleet:movedFromProvider";

/** The provider reference a resource has, or had before the migration left it state-only. */
export function providerOf(r: StateResource): string | undefined {
  const moved = r.outputs?.[MOVED_FROM_PROVIDER];
  return r.provider ?? (typeof moved === "string" ? moved : undefined);
}
