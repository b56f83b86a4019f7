/**
 * Age keys and SOPS-encrypted files for tests, made by the project's own fleet-sops (tools/fleet-sops:
 * SOPS's and age's Go libraries; no sops binary is needed), as `age-keygen` and `sops --encrypt --age`.
 */
import { execFileSync } from "node:child_process";
import { builtToolPath } from "../../core/tool-build";

const fleetSops = () => builtToolPath("build-sops.sh", "fleet-sops");

export interface AgeKey {
  identity: string;
  recipient: string;
}

export function ageKey(): AgeKey {
  return JSON.parse(execFileSync(fleetSops(), ["keygen"], { encoding: "utf8" })) as AgeKey;
}

/** `name`'s content encrypted for the recipients (the extension chooses YAML or JSON), by default only data and stringData, as Flux's guide does. */
export function sopsEncrypt(name: string, content: string, recipients: string[], encryptedRegex = "^(data|stringData)$"): string {
  const out = JSON.parse(
    execFileSync(fleetSops(), ["encrypt"], { input: JSON.stringify({ recipients, encryptedRegex, files: [{ name, content }] }), encoding: "utf8" }),
  );
  const r = out.files[name] as { content?: string; error?: string };
  if (!r.content) throw new Error(`fleet-sops encrypt ${name}: ${r.error}`);
  return r.content;
}
