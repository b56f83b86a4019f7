/**
 * Age keys and SOPS-encrypted files for tests, made by the project's own fleet-sops (tools/fleet-sops:
 * SOPS's and age's Go libraries; no sops binary is needed), as `age-keygen` and `sops --encrypt --age`.
 */
import { execFileSync } from "node:child_process";
import { builtToolPath } from "../../core/base/tool-build";

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

/**
 * A file that only looks SOPS-encrypted (a made-up `sops` block with a MAC, as the reader's detection
 * wants) whose second document nests anchors: 9^9 strings once SOPS's YAML store expands it.
 */
export function fakeSopsBomb(name = "fake"): string {
  const levels = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
  const bomb = levels.map((l, i) =>
    i === 0
      ? `a: &a [${Array(9).fill('"lol"').join(",")}]`
      : `${l}: &${l} [${Array(9)
          .fill(`*${levels[i - 1]}`)
          .join(",")}]`,
  );
  return [
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\nstringData:\n  k: ENC[AES256_GCM,data:AAAA,iv:AAAA,tag:AAAA,type:str]`,
    "sops:\n  age:\n    - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n      enc: x",
    '  lastmodified: "2026-01-01T00:00:00Z"\n  mac: ENC[AES256_GCM,data:AAAA,iv:AAAA,tag:AAAA,type:str]\n  version: 3.9.0\n---',
    ...bomb,
    "",
  ].join("\n");
}
