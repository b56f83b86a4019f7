import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { accessOf, ambientKubeconfigText, kubeconfigEnvFiles, kubeconfigFiles, serverOf } from "../../core/config/cluster-access";

describe("which server and credentials a cluster uses is decided once (core/config/cluster-access.ts)", () => {
  it('a renderer job gets the stack\'s kubeconfig and context, "" for the ambient one, or the kubeconfig acting as a user', () => {
    expect(accessOf({ kubeconfig: "KC", context: "ctx" })).to.deep.equal({ kubeconfig: "KC", context: "ctx" });
    expect(accessOf({ context: "ctx" })).to.deep.equal({ kubeconfig: "", context: "ctx" });
    expect(accessOf(undefined)).to.deep.equal({ kubeconfig: "", context: "" });
    expect(accessOf({ kubeconfig: "KC", context: "ctx" }, "AS-USER")).to.deep.equal({ kubeconfig: "AS-USER", context: "" });
  });

  it("the ambient kubeconfig's files are KUBECONFIG's, else ~/.kube/config, as kubectl reads them", () => {
    expect(kubeconfigFiles({ KUBECONFIG: `/a${path.delimiter}${path.delimiter}/b` })).to.deep.equal(["/a", "/b"]);
    expect(kubeconfigFiles({})).to.deep.equal([path.join(os.homedir(), ".kube", "config")]);
    expect(kubeconfigFiles({ KUBECONFIG: "" })).to.deep.equal([]);
    expect(kubeconfigEnvFiles({})).to.deep.equal([]);
  });

  it("the fingerprint's text of the ambient kubeconfig changes with any of its files; a missing file reads as empty", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-access-"));
    fs.writeFileSync(path.join(dir, "one"), "one");
    const env = { KUBECONFIG: `${dir}/one${path.delimiter}${dir}/two` };
    expect(ambientKubeconfigText(env)).to.equal("one\0");
    fs.writeFileSync(path.join(dir, "two"), "two");
    expect(ambientKubeconfigText(env)).to.equal("one\0two");
  });

  it("the server of a stack kubeconfig given as text or as a path, with its context", () => {
    const kubeconfig =
      "apiVersion: v1\nclusters:\n- name: a\n  cluster: {server: https://a:6443}\n- name: b\n  cluster: {server: https://b:6443}\n" +
      "contexts:\n- name: ca\n  context: {cluster: a}\n- name: cb\n  context: {cluster: b}\ncurrent-context: ca\n";
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pf-access-")), "config");
    fs.writeFileSync(file, kubeconfig);
    expect(serverOf({ kubeconfig })).to.equal("https://a:6443");
    expect(serverOf({ kubeconfig: file, context: "cb" })).to.equal("https://b:6443");
    expect(serverOf({ context: "cb" }, { KUBECONFIG: file })).to.equal("https://b:6443");
  });
});
