/**
 * SOPS-encrypted manifests (issue 43): the stack's per-GitRepo age key (gitRepos[].sopsAgeKey), and the
 * bundle stage that decrypts with it outside the sandbox (core/bundles/sops.ts, tools/fleet-sops), on
 * real files encrypted by SOPS's own library. Live: test/e2e/sops.test.ts.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { readBundles } from "../../core/bundles/read";
import { manifestIdOf } from "../../core/bundles/content";
import { parseStackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { FleetError } from "../../core/base/errors";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { renderBundle } from "../support/render";
import { ageKey, sopsEncrypt } from "../support/sops";
import { errorOf } from "../support/errors";

const FILE = "stacks/Pulumi.test.yaml";
const CANARY = "sops-unit-canary-4242";
const SECRET = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: ${CANARY}\n`;

describe("gitRepos[].sopsAgeKey in the stack file", () => {
  const parse = (sopsAgeKey: unknown) =>
    parseStackConfig({ gitRepos: [{ name: "a", repo: "https://example.com/a.git", sopsAgeKey }] }, FILE, "/project").gitRepos[0];

  it("takes an age key file (comments and several identities allowed); encrypted in the file ({secure}) it is the engine's to decrypt", () => {
    const k1 = ageKey().identity;
    const k2 = ageKey().identity;
    expect(parse(k1).sopsAgeKey).to.equal(k1);
    const file = `# created: 2026-01-01\n# public key: age1...\n${k1}\n\n${k2}\n`;
    expect(parse(file).sopsAgeKey).to.equal(file);
    expect(parse({ secure: "v1:abc" }).sopsAgeKey).to.equal(undefined);
    expect(parse(undefined).sopsAgeKey).to.equal(undefined);
  });

  it("refuses what is not an age identity, naming the field and never quoting the value", () => {
    const bad = "AGE-SECRET-KEY-1NOTAKEY-hunter2";
    const msg = errorOf(() => parse(bad));
    expect(msg).to.equal(
      `${FILE}: gitRepos[0].sopsAgeKey: is not an age key file: one or more AGE-SECRET-KEY-1... lines (age-keygen's output; # comments allowed)`,
    );
    expect(msg).not.to.contain("hunter2");
    expect(errorOf(() => parse(""))).to.contain("gitRepos[0].sopsAgeKey: is not an age key file");
    expect(errorOf(() => parse(["x"]))).to.contain("gitRepos[0].sopsAgeKey");
  });
});

describe("SOPS-encrypted manifests, decrypted with the GitRepo's own age key outside the sandbox", function () {
  this.timeout(5 * 60_000);
  const owner = ageKey();
  const other = ageKey();
  const encrypted = sopsEncrypt("secret.yaml", SECRET, [owner.recipient]);

  const repoWith = (files: Record<string, string>) => {
    const dir = tempDir("pf-sops-");
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
  };
  const read = async (files: Record<string, string>, sopsAgeKey?: string) => {
    const dir = repoWith(files);
    const unread: string[] = [];
    const bundles = await readBundles(dir, gitRepoConfig({ name: "team", repo: dir, ...(sopsAgeKey ? { sopsAgeKey } : {}) }), undefined, (_b, err) =>
      unread.push((err as Error).message),
    );
    return { bundles, unread };
  };
  const APP = { "app/fleet.yaml": "defaultNamespace: team-ns\n", "app/cm.yaml": CONFIGMAP("plain"), "app/secret.yaml": encrypted };

  it("with the GitRepo's key: the Secret is decrypted, the file leaves what the sandbox renders, the manifestID is the committed files'", async () => {
    const {
      bundles: [b],
      unread,
    } = await read(APP, owner.identity);
    expect(unread).to.deep.equal([]);
    expect(b.decryptError).to.equal(undefined);
    expect(b.files.map((f) => f.name).sort()).to.deep.equal(["cm.yaml"]);
    expect(b.decrypted).to.deep.equal([
      { file: "secret.yaml", objects: [{ apiVersion: "v1", kind: "Secret", metadata: { name: "db" }, stringData: { password: CANARY } }] },
    ]);
    expect(b.manifestId).to.equal(
      manifestIdOf([
        { name: "cm.yaml", content: CONFIGMAP("plain") },
        { name: "secret.yaml", content: encrypted },
      ]),
    );
    // The sandbox renders the ConfigMap alone; the Secret joins afterwards, in the bundle's namespace, and makes the deployment secret.
    const r = await renderBundle(b);
    expect(r.objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).to.deep.equal(["ConfigMap team-ns/plain", "Secret team-ns/db"]);
    expect((r as { secret?: true }).secret).to.equal(true);
    expect((r as { decrypted?: string[] }).decrypted).to.deep.equal(["team-ns/db (secret.yaml)"]);
    // A bundle of the encrypted Secret alone: the sandbox renders nothing, the Secret is the deployment.
    const {
      bundles: [solo],
    } = await read({ "solo/fleet.yaml": "namespace: solo-ns\n", "solo/secret.yaml": encrypted }, owner.identity);
    expect((await renderBundle(solo, solo.options)).objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).to.deep.equal([
      "Secret solo-ns/db",
    ]);
  });

  it("a JSON manifest is found and decrypted too", async () => {
    const json = JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name: "j" }, stringData: { password: CANARY } });
    const {
      bundles: [b],
    } = await read({ "app/fleet.yaml": "defaultNamespace: team-ns\n", "app/s.json": sopsEncrypt("s.json", json, [owner.recipient]) }, owner.identity);
    expect(b.decryptError).to.equal(undefined);
    expect(b.decrypted).to.deep.equal([{ file: "s.json", objects: [JSON.parse(json)] }]);
  });

  it("another GitRepo's key, or none: that bundle carries the error naming the file, its other bundles are untouched", async () => {
    const files = { ...APP, "own/fleet.yaml": "defaultNamespace: team-ns\n", "own/cm.yaml": CONFIGMAP("own") };
    for (const key of [other.identity, undefined]) {
      const { bundles, unread } = await read(files, key);
      expect(unread).to.deep.equal([]);
      const app = bundles.find((b) => b.name === "team-app")!;
      expect(bundles.find((b) => b.name === "team-own")!.decryptError).to.equal(undefined);
      expect(app.decryptError).to.be.instanceOf(FleetError);
      expect(app.decryptError!.context).to.deep.include({ gitRepo: "team", bundle: "team-app", file: "app/secret.yaml" });
      expect(app.decryptError!.message).to.contain(
        key
          ? `cannot be decrypted with this GitRepo's age key (sopsAgeKey): it is encrypted for ${owner.recipient}`
          : "has no age key to decrypt it: set gitRepos[team].sopsAgeKey",
      );
      expect(app.decryptError!.message).not.to.contain(CANARY);
      expect(app.files.map((f) => f.name)).to.deep.equal(["cm.yaml"]);
      expect(app.decrypted).to.equal(undefined);
      // Rendering it fails that deployment, on its cluster, before the sandbox sees anything.
      const err = await renderBundle(app, app.options, "c9").then(
        () => undefined,
        (e: unknown) => e as FleetError,
      );
      expect(err?.context).to.deep.include({ bundle: "team-app", cluster: "c9", file: "app/secret.yaml" });
    }
  });

  it("a file changed after encryption fails its MAC; an encrypted ConfigMap is refused: only Secrets stay secret", async () => {
    const tampered = encrypted.replace("name: db", "name: other");
    let {
      bundles: [b],
    } = await read({ ...APP, "app/secret.yaml": tampered }, owner.identity);
    expect(b.decryptError!.message).to.contain("app/secret.yaml").and.to.contain("does not match its MAC");
    const cm = sopsEncrypt("cm.yaml", CONFIGMAP("enc", { k: CANARY }), [owner.recipient], "");
    ({
      bundles: [b],
    } = await read({ ...APP, "app/secret.yaml": cm }, owner.identity));
    expect(b.decryptError!.message).to.contain("document 1 is v1 ConfigMap, not a v1 Secret");
    expect(b.decryptError!.message).not.to.contain(CANARY);
  });

  it("where content would read the ciphertext (a chart, kustomize, an overlay, a values file), the bundle fails naming the file", async () => {
    const chart = {
      "chart/fleet.yaml": "defaultNamespace: team-ns\n",
      "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
      "chart/templates/secret.yaml": encrypted,
    };
    let {
      bundles: [b],
    } = await read(chart, owner.identity);
    expect(b.decryptError!.message).to.contain("chart/templates/secret.yaml").and.to.contain("this is a helm bundle, whose chart would read it encrypted");
    ({
      bundles: [b],
    } = await read(
      { "k/fleet.yaml": "defaultNamespace: team-ns\n", "k/kustomization.yaml": "resources: [secret.yaml]\n", "k/secret.yaml": encrypted },
      owner.identity,
    ));
    expect(b.decryptError!.message).to.contain("k/secret.yaml").and.to.contain("kustomization would read it encrypted");
    ({
      bundles: [b],
    } = await read({ ...APP, "app/overlays/prod/secret.yaml": encrypted }, owner.identity));
    expect(b.decryptError!.message).to.contain("app/overlays/prod/secret.yaml").and.to.contain("not one of the bundle's manifests");
    const values = sopsEncrypt("values.yaml", `password: ${CANARY}\n`, [owner.recipient], "");
    const { unread } = await read(
      {
        ...chart,
        "chart/templates/secret.yaml": CONFIGMAP("x"),
        "chart/fleet.yaml": "helm:\n  chart: .\n  valuesFiles: [values.yaml]\n",
        "chart/values.yaml": values,
      },
      owner.identity,
    );
    expect(unread).to.have.length(1);
    expect(unread[0]).to.contain("chart/values.yaml").and.to.contain("the values file is SOPS-encrypted: values files are not decrypted");
  });

  it("in the desired state: the deployment is secret and render mode says it writes the Secret in clear; a copy without the key fails on each cluster alone", async () => {
    const render = tempDir("pf-sops-render-");
    const repo = new TestRepo({
      ...APP,
      "copied/fleet.yaml": "defaultNamespace: team-ns\n",
      "copied/db.yaml": sopsEncrypt("db.yaml", SECRET, [other.recipient]),
    });
    const s = await desiredState(
      {
        file: FILE,
        renderDir: render,
        agent: { enabled: false },
        clusterGroups: [],
        clusters: ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false })),
        gitRepos: [gitRepoConfig({ name: "team", repo: repo.url(), targets: [{ clusterSelector: {} }], sopsAgeKey: owner.identity })],
      },
      fakeFacts(),
      { cacheRoot: tempDir("pf-sops-cache-") },
    );
    expect(s.failures.map((f) => `${f.bundle} ${f.cluster}`)).to.deep.equal(["team-copied c1", "team-copied c2"]);
    expect(s.failures[0].message).to.contain("copied/db.yaml").and.to.contain(other.recipient);
    const app = s.deployments.filter((d) => d.record.bundle === "team-app");
    expect(app.map((d) => [d.cluster, d.secret])).to.deep.equal([
      ["c1", true],
      ["c2", true],
    ]);
    expect(app[0].warnings).to.include(
      `bundle team-app on cluster c1: render mode writes the Secrets decrypted from SOPS files in clear to ${path.join(render, "c1")}: team-ns/db (secret.yaml)`,
    );
    expect(JSON.stringify(s.failures) + JSON.stringify(s.warnings)).not.to.contain(CANARY);
  });
});
