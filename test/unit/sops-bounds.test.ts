/**
 * fleet-sops under the renderer's bounds (core/bundles/fleet-sops.ts, tools/fleet-sops/sandbox.go):
 * the file that ends it fails alone, naming the limit and its variable; the GitRepo's other encrypted
 * files are decrypted again; a file SOPS's stores would spend unbounded memory or time on is refused
 * before they see it. Live, team against team: test/e2e/attacks-sops-bounds.test.ts.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { decryptBounded, readSopsStderr, SopsRun } from "../../core/bundles/fleet-sops";
import { readBundles } from "../../core/bundles/read";
import { DecryptRequest } from "../../core/bundles/fleet-sops";
import { DEFAULT_SANDBOX_LIMITS } from "../../core/renderer/sandbox";
import { CONFIGMAP, gitRepoConfig, tempDir } from "../support/git-fixtures";
import { ageKey, fakeSopsBomb, sopsEncrypt } from "../support/sops";

const SECRET = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: bounds-canary\n";
const request = (...names: string[]): DecryptRequest => ({ identities: "AGE-SECRET-KEY-1X", files: names.map((name) => ({ name, content: "x" })) });
const decrypted = (names: string[]) => Object.fromEntries(names.map((n) => [n, { objects: [] }]));

describe("fleet-sops's bounds: the file that hits one fails alone", () => {
  it("a file that ends fleet-sops gets the error naming the limit; the others are decrypted in the next run", async () => {
    const runs: string[][] = [];
    const run = async (req: DecryptRequest): Promise<SopsRun> => {
      const names = req.files.map((f) => f.name);
      runs.push(names);
      return names.includes("a/bomb.yaml")
        ? { ok: false, file: "a/bomb.yaml", limit: "memory", reason: "stopped at the memory limit" }
        : { ok: true, files: decrypted(names) };
    };
    const results = await decryptBounded(request("a/bomb.yaml", "b/ok.yaml", "c/ok.yaml"), run, DEFAULT_SANDBOX_LIMITS);
    expect(runs).to.deep.equal([
      ["a/bomb.yaml", "b/ok.yaml", "c/ok.yaml"],
      ["b/ok.yaml", "c/ok.yaml"],
    ]);
    expect(results["a/bomb.yaml"].error).to.equal("the SOPS-encrypted file was not decrypted: stopped at the memory limit");
    expect(results["b/ok.yaml"]).to.deep.equal({ objects: [] });
    expect(results["c/ok.yaml"]).to.deep.equal({ objects: [] });
  });

  it("a run that ends with no file in flight fails the files left, and only those; the GitRepo's time bounds all runs", async () => {
    let calls = 0;
    const none = await decryptBounded(
      request("a.yaml", "b.yaml"),
      async () => (calls++, { ok: false, reason: "fleet-sops failed: exit code 1" }),
      DEFAULT_SANDBOX_LIMITS,
    );
    expect(calls).to.equal(1);
    expect(Object.values(none).map((r) => r.error)).to.deep.equal(Array(2).fill("the SOPS-encrypted file was not decrypted: fleet-sops failed: exit code 1"));

    let clock = 0;
    const deadlines: number[] = [];
    const slow = async (req: DecryptRequest, _l: unknown, deadlineMs: number): Promise<SopsRun> => {
      deadlines.push(deadlineMs);
      clock += 200_000; // each run spends 200 s of the GitRepo's 300
      return { ok: false, file: req.files[0].name, limit: "time", reason: "per-file time" };
    };
    const timed = await decryptBounded(request("a.yaml", "b.yaml", "c.yaml"), slow as never, { ...DEFAULT_SANDBOX_LIMITS, gitRepoSeconds: 300 }, () => clock);
    expect(deadlines).to.deep.equal([300_000, 100_000]);
    expect(timed["c.yaml"].error).to.contain("longer than the limit of 300 s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS)");
  });

  it("reads the file in flight and the limit from stderr, a name with a line break kept whole", () => {
    const name = 'team/evil\nfleet-sops-file "victim.yaml".yaml';
    expect(readSopsStderr(`fleet-sops-file ${JSON.stringify(name)}\nfleet-sops-limit memory ${JSON.stringify(name)}\n`)).to.deep.include({
      file: name,
      limit: "memory",
    });
    expect(readSopsStderr('fleet-sops-file "a.yaml"\nfleet-sops-file-done\nfleet-sops-file "b.yaml"\nfleet-sops-limit time "b.yaml"\n')).to.deep.include({
      file: "b.yaml",
      limit: "time",
    });
    expect(readSopsStderr('fleet-sops-file "a.yaml"\nfleet-sops-file-done\nfatal error: runtime: out of memory\n')).to.deep.include({
      file: undefined,
      limit: "memory",
    });
  });
});

describe("fleet-sops's bounds on real files (the built tool)", function () {
  this.timeout(5 * 60_000);
  const owner = ageKey();
  const read = async (files: Record<string, string>, env: Record<string, string> = {}) => {
    const dir = tempDir("pf-sops-bounds-");
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      return await readBundles(dir, gitRepoConfig({ name: "team", repo: dir, sopsAgeKey: owner.identity }), undefined, (_b, err) => {
        throw err;
      });
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  };
  const good = { "good/fleet.yaml": "defaultNamespace: ns\n", "good/secret.yaml": sopsEncrypt("secret.yaml", SECRET, [owner.recipient]) };
  const plain = { "plain/fleet.yaml": "defaultNamespace: ns\n", "plain/cm.yaml": CONFIGMAP("plain") };

  it("a fake SOPS file with an alias bomb in its second document fails its bundle at once; the GitRepo's other bundles decrypt and read", async () => {
    const start = Date.now();
    const bundles = await read({ "bomb/fleet.yaml": "defaultNamespace: ns\n", "bomb/secret.yaml": fakeSopsBomb(), ...good, ...plain });
    expect(Date.now() - start).to.be.lessThan(60_000);
    const by = (n: string) => bundles.find((b) => b.name === `team-${n}`)!;
    expect(by("bomb").decryptError!.message).to.contain("bomb/secret.yaml").and.contain("more than 200000 YAML nodes once its aliases are expanded");
    expect(by("good").decryptError).to.equal(undefined);
    expect(by("good").decrypted![0].objects[0].metadata.name).to.equal("db");
    expect(by("plain").decryptError).to.equal(undefined);
  });

  it("a file over its time (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS) fails its bundle naming the limit; the next run decrypts the others", async () => {
    // Under the budgets, but SOPS's duplicate-key check is quadratic in a mapping's keys: nine mappings of 9,999 keys (180,000 nodes) take 2 s.
    const wide = Array.from({ length: 9 }, (_, m) => `m${m}:\n${Array.from({ length: 9_999 }, (_, i) => `  k${i}: v\n`).join("")}`).join("");
    const slow = `${wide}sops:\n  mac: ENC[AES256_GCM,data:x,iv:x,tag:x,type:str]\n  lastmodified: "2026-01-01T00:00:00Z"\n`;
    const bundles = await read(
      { "a-slow/fleet.yaml": "defaultNamespace: ns\n", "a-slow/secret.yaml": slow, ...good },
      { PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "1" },
    );
    const by = (n: string) => bundles.find((b) => b.name === `team-${n}`)!;
    expect(by("a-slow").decryptError!.message)
      .to.contain("a-slow/secret.yaml")
      .and.contain("longer than the limit of 1 s per file (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS)");
    expect(by("good").decryptError).to.equal(undefined);
    expect(by("good").decrypted![0].objects[0].metadata.name).to.equal("db");
  });
});
