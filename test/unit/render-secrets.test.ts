import { expect } from "chai";
import { renderedSecretsNotes, setupSecretsNote } from "../../core/desired/render-secrets";

const secret = (name: string, namespace: string, stringData: Record<string, string> = { password: "x" }) => ({
  kind: "Secret",
  metadata: { name, namespace },
  stringData,
});

describe("render mode says it writes Secrets in clear (core/desired/render-secrets.ts)", () => {
  it("names a deployment's decrypted Secrets by their file and every other Secret once; a set without Secrets says nothing", () => {
    const objects = [secret("db", "app"), secret("committed", "app"), { kind: "ConfigMap", metadata: { name: "c", namespace: "app" } }];
    expect(renderedSecretsNotes("/r", "c1", objects, ["app/db (db.yaml)"])).to.deep.equal([
      "render mode writes the Secrets decrypted from SOPS files in clear to /r/c1: app/db (db.yaml)",
      "render mode writes this bundle's Secrets in clear to /r/c1: app/committed",
    ]);
    expect(renderedSecretsNotes("/r", "c1", [objects[2]])).to.deep.equal([]);
  });

  it("a cluster's setup: the operator's Secrets and an agent's Secret with a token; an agent without one is not named", () => {
    const agent = (token: string) => ({ manifest: secret("fleet-agent-bootstrap", "cattle-fleet-system", { apiServerURL: "https://x", token }) });
    const operator = { manifest: { kind: "Secret", metadata: { name: "db", namespace: "team" }, data: { password: "eA==" } } };
    expect(setupSecretsNote("/r", "c1", [agent(""), operator])).to.deep.equal([
      "cluster c1: render mode writes its Secrets (the agent's token, downstreamResources) in clear to /r/c1: team/db",
    ]);
    expect(setupSecretsNote("/r", "c1", [agent("")])).to.deep.equal([]);
    expect(setupSecretsNote("/r", "c1", [agent("t0ken")])[0]).to.contain("cattle-fleet-system/fleet-agent-bootstrap");
  });
});
