/**
 * Where `lookup` may read (core/render/lookup-scope.ts) and what it read from Secrets staying secret
 * (core/render/lookup-secrets.ts): issue 41.
 */
import { expect } from "chai";
import { lookupOutOfScope, lookupScopeError } from "../../core/render/lookup-scope";
import { lookedUpSecrets, redactSecrets } from "../../core/render/lookup-secrets";
import { LookupKey } from "../../core/model/renderer-protocol";

const key = (kind: string, namespace: string, name = "x", apiVersion = "v1"): LookupKey => ({ apiVersion, kind, namespace, name });
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("lookup scope (core/render/lookup-scope.ts)", () => {
  const own = { namespace: "team-a" };
  const allowing = { namespace: "team-a", allowed: ["team-a-*", "shared"] };

  it("reads the deployment's own namespace and those allowedTargetNamespaces match, nothing else", () => {
    expect(lookupOutOfScope(key("Secret", "team-a"), own)).to.equal(undefined);
    expect(lookupOutOfScope(key("Secret", "team-a", ""), own)).to.equal(undefined);
    expect(lookupOutOfScope(key("Secret", "team-b"), own)).to.equal("reads Secret x in namespace team-b");
    expect(lookupOutOfScope(key("ConfigMap", "kube-system", ""), own)).to.equal("lists ConfigMap objects in namespace kube-system");
    expect(lookupOutOfScope(key("Secret", "team-a-db"), allowing)).to.equal(undefined);
    expect(lookupOutOfScope(key("ConfigMap", "shared"), allowing)).to.equal(undefined);
    expect(lookupOutOfScope(key("Secret", "team-b"), allowing)).to.equal("reads Secret x in namespace team-b");
    // A kind it does not know is taken as namespaced.
    expect(lookupOutOfScope(key("Widget", "team-b", "w", "example.com/v1"), own)).to.equal("reads Widget w in namespace team-b");
  });

  it("another GitRepo's namespace (its deployments were there first) is not read, even as the deployment's own, unless allowedTargetNamespaces names it", () => {
    const foreign = (ns: string) => (ns === "victim-prod" ? ["victim"] : undefined);
    const squatting = { namespace: "victim-prod", foreign };
    expect(lookupOutOfScope(key("Secret", "victim-prod", "db"), squatting)).to.equal(
      "reads Secret db in namespace victim-prod, which is GitRepo victim's (its deployments were there first)",
    );
    expect(lookupOutOfScope(key("Secret", "victim-prod", ""), squatting)).to.equal(
      "lists Secret objects in namespace victim-prod, which is GitRepo victim's (its deployments were there first)",
    );
    expect(lookupOutOfScope(key("Secret", "victim-prod", "db"), { ...squatting, allowed: ["victim-prod"] })).to.equal(undefined);
    expect(lookupOutOfScope(key("Secret", "team-a"), { namespace: "team-a", foreign })).to.equal(undefined);
  });

  it("a list across all namespaces is refused; a Get without a namespace (only cluster-scoped objects answer it) is read", () => {
    expect(lookupOutOfScope(key("Secret", "", ""), allowing)).to.equal("lists Secret objects across all namespaces");
    expect(lookupOutOfScope(key("Widget", "", "", "example.com/v1"), own)).to.equal("lists Widget objects across all namespaces");
    expect(lookupOutOfScope(key("Widget", "", "w", "example.com/v1"), own)).to.equal(undefined);
  });

  it("cluster-scoped kinds are read whatever the namespace; kube-public is public, but not its Secrets", () => {
    for (const k of ["Namespace", "Node", "StorageClass", "CustomResourceDefinition"]) {
      expect(lookupOutOfScope(key(k, "", ""), own), k).to.equal(undefined);
      expect(lookupOutOfScope(key(k, "elsewhere"), own), k).to.equal(undefined);
    }
    expect(lookupOutOfScope(key("ConfigMap", "kube-public", "cluster-info"), own)).to.equal(undefined);
    expect(lookupOutOfScope(key("Secret", "kube-public"), own)).to.equal("reads Secret x in namespace kube-public");
  });

  it("the failure names what, where, the deployment and the stack setting", () => {
    const where = { gitRepo: "team-a", bundle: "team-a-app", cluster: "c1" };
    expect(lookupScopeError(key("Secret", "team-a"), own, where)).to.equal(undefined);
    const err = lookupScopeError(key("Secret", "kube-system", "admin"), allowing, where)!;
    expect(err.message).to.equal(
      "gitRepo team-a, bundle team-a-app, cluster c1: a template's lookup reads Secret admin in namespace kube-system " +
        '(lookup "v1" "Secret" "kube-system" "admin"), outside this GitRepo\'s namespaces: it is not read. A lookup reads only the deployment\'s ' +
        "namespace team-a or gitRepos[team-a].allowedTargetNamespaces (team-a-*, shared); the stack setting gitRepos[team-a].allowedTargetNamespaces " +
        "widens that (it also lets the GitRepo's objects into those namespaces)",
    );
  });
});

describe("lookup secrets (core/render/lookup-secrets.ts)", () => {
  const secret = (data: Record<string, string>, extra: object = {}) => ({ apiVersion: "v1", kind: "Secret", metadata: { name: "db" }, data, ...extra });

  it("a Secret, or a list holding Secrets, gives each value decoded and as read; other kinds give nothing", () => {
    const got = lookedUpSecrets([
      { key: key("Secret", "a", "db"), object: secret({ password: b64("hunter22"), tiny: b64("no") }) },
      { key: key("Secret", "a", ""), object: { apiVersion: "v1", kind: "SecretList", items: [{ metadata: { name: "t" }, data: { token: b64("tok-123") } }] } },
      { key: key("ConfigMap", "a", "cm"), object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" }, data: { region: "eu-west-1" } } },
      { key: key("Secret", "a", "gone") },
    ]);
    expect(got.any).to.equal(true);
    // Longest first; a value under 4 characters is not searched for (its objects are secret all the same).
    expect(got.values).to.deep.equal([b64("hunter22"), b64("tok-123"), "hunter22", "tok-123"]);
    expect(lookedUpSecrets([{ key: key("ConfigMap", "a", "cm"), object: { kind: "ConfigMap", data: { a: "secretish" } } }])).to.deep.equal({
      any: false,
      values: [],
    });
    // An empty Secret still makes the objects secret.
    expect(lookedUpSecrets([{ key: key("Secret", "a", "db"), object: secret({}) }])).to.deep.equal({ any: true, values: [] });
  });

  it("redacts both encodings, a JSON-escaped multi-line value and its lines, and nothing else", () => {
    const pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkq\n-----END KEY-----";
    const { values } = lookedUpSecrets([{ key: key("Secret", "a", "db"), object: secret({ password: b64("hunter22"), key: b64(pem) }) }]);
    expect(redactSecrets(`template: fail: the password is hunter22 (${b64("hunter22")})`, values)).to.equal(
      "template: fail: the password is [secret] ([secret])",
    );
    expect(redactSecrets(`bad value ${JSON.stringify(pem)}`, values)).to.equal('bad value "[secret]"');
    expect(redactSecrets("line MIIEvQIBADANBgkq seen", values)).to.equal("line [secret] seen");
    expect(redactSecrets("nothing secret here", values)).to.equal("nothing secret here");
    // One pass: a value that is part of the marker ("secret") does not redact the marker again.
    expect(redactSecrets("x pw-from-the-cluster, a secret", ["pw-from-the-cluster", "secret"])).to.equal("x [secret], a [secret]");
  });
});
