/**
 * The digest of the code that turns a stack's inputs into resources: core/, components/, automation/,
 * fleet-render, the provider's source, the tool pins. Another code may register the same inputs
 * differently, so what was recorded under one (a shard's inputs fingerprint: automation/shards/inputs.ts;
 * each resource's registration: core/desired/registrations.ts) is never taken for another's. Read once
 * per process.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../../core/base/project-dir";

/** The files whose content decides what the program registers for given inputs. */
const CODE = [
  "core",
  "components",
  // What the operations hand the program (adoptions, carried access, names in the state) and the provider's own
  // source, whose hash names its build (tools/build-pulumi.sh): a new one diffs every pair anew.
  "automation",
  "tools/fleet-provider",
  "index.ts",
  "package-lock.json",
  "tools/fleet-render",
  "tools/pulumi/go.mod",
  "tools/kubernetes/go.mod",
  "tools/language-nodejs/go.mod",
];
/** The files read: sources, modules' pins, settings. */
const SOURCE = /\.(ts|js|mjs|cjs|go|mod|sum|json|ya?ml|sh)$/;
let codeHash: string | undefined;

/** The digest as a process that started this one computed it (the shard runner's: automation/shards/shard-process.ts). */
export function knownProgramCodeHash(hash: string): void {
  codeHash = hash;
}

export function programCodeHash(): string {
  if (codeHash) return codeHash;
  const h = createHash("sha256");
  const walk = (rel: string) => {
    const abs = path.join(PROJECT_DIR, rel);
    if (!fs.existsSync(abs)) return;
    if (fs.statSync(abs).isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) if (name !== "node_modules") walk(path.join(rel, name));
      return;
    }
    // Sources only: a build left in a source folder (a `go build` output) is not code this program runs, and would cost a read of its size.
    if (SOURCE.test(rel)) h.update(`${rel}\0`).update(fs.readFileSync(abs)).update("\0");
  };
  CODE.forEach(walk);
  return (codeHash = h.digest("hex"));
}
