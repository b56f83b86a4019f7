/**
 * A bundle's namespaceLabels and namespaceAnnotations are checked as the API server checks an object's
 * metadata (apimachinery's ValidateLabels and ValidateAnnotations) when fleet.yaml is read: a key or a
 * size the server would refuse fails that bundle there, naming file, field and bundle, instead of
 * reaching the cluster's namespaces.
 */
import { expect } from "chai";
import { annotationsProblem, ANNOTATIONS_MAX_BYTES, labelKeyProblem, labelValueProblem } from "../../core/base/k8s-validation";
import { readBundles } from "../../core/bundles/read";
import { namespacesRefusedFor } from "../../core/desired/namespaces";
import { resolveSource } from "../../core/source/git";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

describe("namespace labels and annotations as the API server validates them", () => {
  const hostileKeys: [string, string][] = [
    ["", "name part must be non-empty"],
    ["/name", "prefix part must be non-empty"],
    ["example.com/", "name part must be non-empty"],
    ["a/b/c", "at most one '/'"],
    [`${"p".repeat(254)}/name`, "prefix part must be a lowercase DNS subdomain"],
    [`example.com/${"n".repeat(64)}`, "no more than 63 characters"],
    ["-starts-with-dash", "must start and end with an alphanumeric character"],
    ["has space", "must start and end with an alphanumeric character"],
    ["new\nline", "must start and end with an alphanumeric character"],
    ["exa_mple.com/x", "prefix part must be a lowercase DNS subdomain"],
  ];

  it("refuses every annotation key that is not a qualified name, each named", () => {
    for (const [key, why] of hostileKeys) {
      const problem = annotationsProblem({ ok: "1", [key]: "v" });
      expect(problem, JSON.stringify(key))
        .to.contain(`invalid annotation key ${JSON.stringify(key)}`)
        .and.contain(why);
    }
  });

  it("takes an upper-case key as the API server does (case ignored for annotations), and refuses it for labels", () => {
    expect(annotationsProblem({ "Example.COM/Owner": "team-a", Note: "x" })).to.equal(undefined);
    expect(labelKeyProblem("Example.COM/owner")).to.contain("lowercase DNS subdomain");
    expect(labelKeyProblem("example.com/Owner")).to.equal(undefined);
  });

  it("refuses annotations over 256 KiB in total, counted in bytes of keys and values, as apimachinery counts them", () => {
    const half = "x".repeat(ANNOTATIONS_MAX_BYTES / 2);
    expect(annotationsProblem({ a: half.slice(1), b: half.slice(1) })).to.equal(undefined);
    expect(annotationsProblem({ a: half, b: half })).to.contain(`${ANNOTATIONS_MAX_BYTES + 2} bytes, more than the API server's limit of 262144`);
    // Multi-byte characters count as their UTF-8 bytes, not as characters.
    expect(annotationsProblem({ a: "é".repeat(ANNOTATIONS_MAX_BYTES / 2) })).to.contain("more than the API server's limit");
    expect(annotationsProblem({})).to.equal(undefined);
  });

  it("label keys and values as ValidateLabels: every hostile key and an over-long or odd value", () => {
    for (const [key] of hostileKeys) expect(labelKeyProblem(key), JSON.stringify(key)).to.be.a("string");
    expect(labelValueProblem("v".repeat(64))).to.contain("no more than 63");
    expect(labelValueProblem("a/b")).to.contain("alphanumeric");
    expect(labelValueProblem("")).to.equal(undefined);
  });

  describe("fleet.yaml (real git): the bundle that sets them fails alone, its file, field and bundle named", () => {
    async function read(files: Record<string, string>) {
      const repo = new TestRepo(files);
      const cfg = gitRepoConfig({ name: "repo", repo: repo.url() });
      const src = await resolveSource(cfg, tempDir("pf-cache-"));
      const failures: { bundle?: string; message: string }[] = [];
      const bundles = await readBundles(src.dir, cfg, undefined, (where, err) => failures.push({ bundle: where.bundle, message: (err as Error).message }));
      return { bundles: bundles.map((b) => b.name), failures };
    }

    it("an annotation key the server refuses, top level or in a target customization; a bystander bundle reads", async () => {
      const { bundles, failures } = await read({
        "bad/fleet.yaml": "defaultNamespace: team-a\nnamespaceAnnotations:\n  a/b/c: x\n",
        "bad/cm.yaml": CONFIGMAP("a"),
        "big/fleet.yaml": `defaultNamespace: team-c\ntargetCustomizations:\n- name: all\n  namespaceAnnotations:\n    huge: "${"x".repeat(ANNOTATIONS_MAX_BYTES)}"\n`,
        "big/cm.yaml": CONFIGMAP("c"),
        "good/fleet.yaml": "defaultNamespace: team-b\nnamespaceAnnotations:\n  Example.com/owner: b\n",
        "good/cm.yaml": CONFIGMAP("b"),
      });
      expect(bundles).to.deep.equal(["repo-good"]);
      expect(failures.map((f) => f.bundle)).to.deep.equal(["repo-bad", "repo-big"]);
      expect(failures[0].message).to.match(/^bad\/fleet\.yaml.*gitRepo repo, bundle repo-bad.*namespaceAnnotations: invalid annotation key "a\/b\/c"/);
      expect(failures[1].message).to.match(/big\/fleet\.yaml.*targetCustomizations\[0\]\.namespaceAnnotations: annotations are \d+ bytes/);
    });

    it("a namespace label key or value the server refuses", async () => {
      const { failures } = await read({
        "k/fleet.yaml": "namespaceLabels:\n  Example.com/owner: a\n",
        "k/cm.yaml": CONFIGMAP("a"),
        "v/fleet.yaml": "namespaceLabels:\n  owner: a/b\n",
        "v/cm.yaml": CONFIGMAP("b"),
      });
      expect(failures.map((f) => f.message)).to.satisfy(
        (m: string[]) =>
          m[0].includes("namespaceLabels.Example.com/owner: invalid label key") && m[1].includes('namespaceLabels.owner: invalid label value "a/b"'),
      );
    });
  });
});

describe("a refused namespace fails the pairs that need it, and only them", () => {
  // The setup's messages as tools/fleet-provider writes them (namespaceRefusalLine), beside its other lines.
  const setupMessages = [
    "/Secret/team-a/ops not applied: its namespace team-a was refused: denied",
    'namespace team-a was refused by the API server: admission webhook "deny" denied the request: no\nsecond line',
    "namespace team-x was refused by the API server: exceeded quota",
  ];

  it("a pair that needs a refused namespace fails with it, named with the server's words", () => {
    expect(namespacesRefusedFor(["team-a", "shared"], setupMessages)).to.deep.equal({
      "team-a": 'admission webhook "deny" denied the request: no\nsecond line',
    });
    expect(namespacesRefusedFor(["team-x", "team-a", "team-a"], setupMessages)).to.have.keys("team-a", "team-x");
  });

  it("a bystander's pair, in namespaces that were created, does not", () => {
    expect(namespacesRefusedFor(["team-b"], setupMessages)).to.equal(undefined);
    // A namespace whose name only begins like a refused one is another namespace.
    expect(namespacesRefusedFor(["team"], setupMessages)).to.equal(undefined);
    expect(namespacesRefusedFor([], setupMessages)).to.equal(undefined);
  });

  it("a setup with no message, or messages of its own objects only, fails no pair", () => {
    expect(namespacesRefusedFor(["team-a"], null)).to.equal(undefined);
    expect(namespacesRefusedFor(["team-a"], [setupMessages[0], "Deployment cattle-fleet-system/fleet-agent: not ready"])).to.equal(undefined);
  });
});
