/**
 * SOPS-encrypted manifests in a GitRepo (issue 43), decrypted as Flux's kustomize-controller decrypts
 * them, with three differences that keep a GitRepo a team's boundary: the key is the GitRepo's own
 * (`gitRepos[].sopsAgeKey`, a stack secret; nothing of the runner's), the decryption runs outside the
 * content sandbox (fleet-sops, tools/fleet-sops: SOPS's own Go libraries, MAC checked; confined and
 * bounded as the sandbox is: core/bundles/fleet-sops.ts), and what it
 * gives never enters the sandbox: the encrypted files are taken out of the files the sandbox renders,
 * and their Secrets join each deployment's rendered objects afterwards (core/render/deployments.ts),
 * registered as Pulumi secrets. So no template, kustomization or overlay can read a decrypted value,
 * and a file copied from another team's repository does not open without that team's key.
 */
import { FleetError } from "../base/errors";
import { stopSignal } from "../base/stop-signal";
import { GitRepoConfig } from "../config/git-repo";
import { joinRel } from "./checkout";
import { decryptBounded, DecryptRequest, DecryptResults } from "./fleet-sops";
import { rawManifestFiles } from "./content";
import { K8sObject } from "../model/k8s-object";
import { Bundle, BundleFile, DecryptedFile } from "./types";

export type Decrypter = (request: DecryptRequest) => Promise<DecryptResults>;

/**
 * Whether a file is SOPS-encrypted: its MAC in SOPS's format, the marker Flux's decryptor looks for,
 * under a top-level `sops` key. Plain text only: nothing of the content is parsed here.
 */
export function isSopsEncrypted(f: BundleFile): boolean {
  if (f.encoding) return false;
  if (/\.json$/i.test(f.name)) return f.content.includes('"mac": "ENC[') && f.content.includes('"sops"');
  if (/\.ya?ml$/i.test(f.name)) return f.content.includes("mac: ENC[") && /^sops:/m.test(f.content);
  return false;
}

/**
 * Each bundle with its encrypted files decrypted (fleet-sops, one run for the GitRepo unless a file ends it) and taken out of
 * its files; a bundle that cannot be decrypted carries `decryptError`, which fails each of its
 * deployments alone. Its manifestID stays the one of its files as committed: a new ciphertext is a new
 * deploymentID, as any changed file is.
 */
export async function withDecryptedFiles(bundles: Bundle[], repo: GitRepoConfig, decrypt: Decrypter = decryptBounded): Promise<Bundle[]> {
  const found = bundles.map((b) => ({ bundle: b, encrypted: b.files.filter((f) => !f.name.startsWith(".chart/") && isSopsEncrypted(f)) }));
  const request: DecryptRequest = { identities: repo.sopsAgeKey ?? "", files: [] };
  const problems = new Map<Bundle, FleetError>();
  for (const { bundle: b, encrypted } of found) {
    if (!encrypted.length) continue;
    const ctx = (f: BundleFile) => ({ gitRepo: b.gitRepo, bundle: b.name, file: joinRel(b.path, f.name) });
    const unread = unreadEncrypted(b, encrypted);
    if (unread) {
      problems.set(b, new FleetError(unread.reason, ctx(unread.file)));
      continue;
    }
    if (!repo.sopsAgeKey) {
      problems.set(
        b,
        new FleetError(
          `the file is SOPS-encrypted and GitRepo ${repo.name} has no age key to decrypt it: set gitRepos[${repo.name}].sopsAgeKey ` +
            "(a Pulumi secret; commands that read the stack file without the engine, such as plan and render, do not decrypt)",
          ctx(encrypted[0]),
        ),
      );
      continue;
    }
    for (const f of encrypted) request.files.push({ name: joinRel(b.path, f.name), content: f.content });
  }
  let results: DecryptResults = {};
  if (request.files.length) {
    try {
      results = await decrypt(request);
    } catch (err) {
      if (err === stopSignal.reason) throw err;
      // fleet-sops itself failed (its build, its process): each bundle that needed it fails, no other.
      const reason = `the SOPS-encrypted file was not decrypted: ${err instanceof Error ? err.message : String(err)}`;
      results = Object.fromEntries(request.files.map((f) => [f.name, { error: reason }]));
    }
  }
  return found.map(({ bundle: b, encrypted }) => {
    if (!encrypted.length) return b;
    const files = b.files.filter((f) => !encrypted.includes(f));
    const problem = problems.get(b);
    if (problem) return { ...b, files, decryptError: problem };
    const decrypted: DecryptedFile[] = [];
    for (const f of encrypted) {
      const file = joinRel(b.path, f.name);
      const r = results[file];
      if (!r?.objects) {
        const reason = r?.error?.startsWith("the SOPS-encrypted file")
          ? r.error
          : `the SOPS-encrypted file ${r?.error ?? "was not decrypted (no answer from fleet-sops)"}`;
        return { ...b, files, decryptError: new FleetError(reason, { gitRepo: b.gitRepo, bundle: b.name, file }) };
      }
      decrypted.push({ file: f.name, objects: r.objects });
    }
    return { ...b, files, decrypted };
  });
}

/**
 * An encrypted file no raw-manifest render would take as it is: kustomize, a chart's templates, an
 * overlay or a values file would read the ciphertext (and giving them the plaintext would hand the
 * values to content), so such a bundle fails naming the file rather than deploy ciphertext.
 */
function unreadEncrypted(b: Bundle, encrypted: BundleFile[]): { file: BundleFile; reason: string } | undefined {
  const raw = new Set(b.style.kind === "yaml" ? rawManifestFiles(b.files) : []);
  const bad = encrypted.find((f) => !raw.has(f));
  if (!bad) return undefined;
  const where =
    b.style.kind === "yaml"
      ? "it is not one of the bundle's manifests (an overlay, or inside a chart or another bundle)"
      : `this is a ${b.style.kind} bundle, whose ${b.style.kind === "helm" ? "chart" : "kustomization"} would read it encrypted`;
  return {
    file: bad,
    reason: `the file is SOPS-encrypted, and only a raw YAML bundle's manifests are decrypted: ${where}; make it a manifest of a raw YAML bundle of its own`,
  };
}

/** The decrypted Secrets of a bundle, copies for one deployment (each is placed in its namespace apart). */
export function decryptedObjects(b: Bundle): K8sObject[] {
  return (b.decrypted ?? []).flatMap((d) => d.objects.map((o) => structuredClone(o)));
}
