/**
 * Runs program code under Pulumi mocks and records every registration the way the engine would see
 * it: URN, type, name, parent, provider, inputs, dependencies and lifecycle options. Reusable by any
 * test that wants to compare what two program runs register (config A vs B, reordered lists, ...).
 */
import * as pulumi from "@pulumi/pulumi";

export interface Registration {
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  remote: boolean;
  parent: string;
  provider: string;
  inputs: Record<string, unknown>;
  dependencies: string[];
  retainOnDelete: boolean;
  ignoreChanges: string[];
  /** Each alias as the SDK sends it: a URN, or the spec's fields as JSON (name, type, parent URN...). */
  aliases: string[];
  transforms: number;
  /** Outputs the engine keeps as secrets whatever the provider returns. */
  additionalSecretOutputs: string[];
}

export interface MockRun<T> {
  result: T;
  registrations: Registration[];
  /** Registrations by URN. */
  byUrn: Map<string, Registration>;
  warnings: string[];
}

export interface MockOptions {
  project?: string;
  stack?: string;
  /** Outputs a StackReference read returns (the stack's previous outputs). */
  stackOutputs?: Record<string, unknown>;
  preview?: boolean;
}

/** The SDK's own "wait until every outstanding RPC is done" (what it does before disconnecting). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const waitForRPCs: () => Promise<void> = require("@pulumi/pulumi/runtime/settings").waitForRPCs;

/**
 * This SDK's mock monitor reports no support for `transforms`, so a resource with a transform would
 * fail to register under mocks. The engine supports them; let the mocks accept them too, by recording
 * each transform behind a callback token instead of serving it over gRPC.
 */
export const registeredTransforms = new Map<string, pulumi.ResourceTransform>();
function enableTransformsUnderMocks(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const store = require("@pulumi/pulumi/runtime/state").getStore();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Callback } = require("@pulumi/pulumi/proto/callback_pb");
  store.supportsTransforms = true;
  store.callbacks = {
    awaitStackRegistrations: async () => undefined,
    registerTransform: async (transform: pulumi.ResourceTransform) => {
      const token = `transform-${registeredTransforms.size}`;
      registeredTransforms.set(token, transform);
      const cb = new Callback();
      cb.setToken(token);
      cb.setTarget("mock");
      return cb;
    },
  };
}

type AnyReq = Record<string, (...a: unknown[]) => unknown>;
type MonitorCall = (req: AnyReq, cb: (err: unknown, res: AnyReq) => void) => void;

export async function runUnderMocks<T>(program: () => Promise<T> | T, options: MockOptions = {}): Promise<MockRun<T>> {
  const pending: Promise<unknown>[] = [];
  const requests: AnyReq[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource: (a) => {
        if (a.type === "pulumi:pulumi:StackReference") {
          return { id: a.inputs.name, state: { name: a.inputs.name, outputs: options.stackOutputs ?? {}, secretOutputNames: [] } };
        }
        // Provider-side components (helm.v4.Chart, kustomize.v2.Directory) report their children as `resources`.
        const remoteComponent = a.type === "kubernetes:helm.sh/v4:Chart" || a.type === "kubernetes:kustomize/v2:Directory";
        return { id: a.custom ? `${a.name}-id` : undefined, state: remoteComponent ? { ...a.inputs, resources: [] } : a.inputs };
      },
      call: (a) => a.inputs,
    },
    options.project ?? "pulumi-fleet",
    options.stack ?? "test",
    options.preview ?? false,
    "organization",
  );

  enableTransformsUnderMocks();
  // Wrap the monitor's two ways of adding a resource to the graph, keeping each request and its URN.
  const monitor = pulumi.runtime.getMonitor() as unknown as Record<"registerResource" | "readResource", MonitorCall>;
  const urnOf = new Map<AnyReq, string>();
  for (const method of ["registerResource", "readResource"] as const) {
    const original = monitor[method].bind(monitor);
    monitor[method] = (req, cb) => {
      requests.push(req);
      pending.push(
        new Promise<void>((resolve) =>
          original(req, (err, res) => {
            if (!err) urnOf.set(req, res.getUrn() as string);
            cb(err, res);
            resolve();
          }),
        ),
      );
    };
  }
  const warnings: string[] = [];
  const originalWarn = pulumi.log.warn;
  (pulumi.log as { warn: typeof pulumi.log.warn }).warn = (msg: string) => {
    warnings.push(msg);
    return Promise.resolve();
  };
  try {
    const result = await program();
    // Registrations are asynchronous: wait for the SDK's RPC queue to drain, then for our wrappers.
    await waitForRPCs();
    for (let seen = -1; seen !== pending.length;) {
      seen = pending.length;
      await Promise.all(pending);
      await new Promise((r) => setImmediate(r));
    }
    const registrations = requests.map((req) => {
      // A read (StackReference) request has properties where a registration has an object, and no lifecycle options.
      const isRead = !req.getObject;
      const inputs = pulumi.runtime.deserializeProperties((isRead ? req.getProperties() : req.getObject()) as never) as Record<string, unknown>;
      const reg: Registration = {
        urn: urnOf.get(req) ?? "",
        type: req.getType() as string,
        name: req.getName() as string,
        custom: req.getCustom ? (req.getCustom() as boolean) : true,
        remote: req.getRemote ? (req.getRemote() as boolean) : false,
        parent: req.getParent() as string,
        provider: req.getProvider() as string,
        inputs,
        dependencies: [...(req.getDependenciesList() as string[])].sort(),
        retainOnDelete: isRead ? false : !!req.getRetainondelete(),
        ignoreChanges: isRead ? [] : (req.getIgnorechangesList() as string[]),
        aliases: isRead ? [] : aliasesOf(req),
        transforms: isRead ? 0 : (req.getTransformsList() as unknown[]).length,
        additionalSecretOutputs: isRead ? [] : [...(req.getAdditionalsecretoutputsList() as string[])],
      };
      return reg;
    });
    registrations.sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
    return { result, registrations, byUrn: new Map(registrations.map((r) => [r.urn, r])), warnings };
  } finally {
    (pulumi.log as { warn: typeof pulumi.log.warn }).warn = originalWarn;
  }
}

/** Alias URNs, or alias specs (when the monitor takes specs), as comparable strings. */
function aliasesOf(req: { getAliasurnsList?: () => string[]; getAliasesList?: () => { toObject(): unknown }[] }): string[] {
  const urns = req.getAliasurnsList?.() ?? [];
  const specs = (req.getAliasesList?.() ?? []).map((a) => JSON.stringify(a.toObject()));
  return [...urns, ...specs];
}
