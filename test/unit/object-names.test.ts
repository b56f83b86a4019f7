/** Names from GitRepo content checked as the API server checks them (core/base/k8s-validation.ts). */
import { expect } from "chai";
import { apiVersionProblem, dnsLabelProblem, kindProblem, objectNameProblem } from "../../core/base/k8s-validation";

describe("object names, as the API server validates them", () => {
  it("most kinds: DNS-1123 subdomains; Namespaces DNS-1123 labels; Services DNS-1035 labels", () => {
    expect(objectNameProblem("ConfigMap", "app.config-1")).to.equal(undefined);
    for (const bad of ["../../escape", "Upper", "-x", "x-", "a/b", "", "x".repeat(254)]) expect(objectNameProblem("ConfigMap", bad), bad).to.be.a("string");
    expect(objectNameProblem("Namespace", "a.b")).to.match(/RFC 1123 label/);
    expect(objectNameProblem("Service", "1web")).to.match(/RFC 1035 label/);
    expect(objectNameProblem("Service", "web-1")).to.equal(undefined);
    expect(dnsLabelProblem("x".repeat(64))).to.match(/no more than 63/);
  });

  it("RBAC objects: path segments, so system:controller:x is valid and ../x is not", () => {
    expect(objectNameProblem("ClusterRole", "system:controller:job-controller")).to.equal(undefined);
    for (const bad of ["..", ".", "a/b", "50%"]) expect(objectNameProblem("Role", bad), bad).to.be.a("string");
  });

  it("kinds and API versions, which render mode also puts in file names", () => {
    expect(kindProblem("HorizontalPodAutoscaler")).to.equal(undefined);
    expect(kindProblem("../../Escape")).to.be.a("string");
    for (const ok of ["v1", "apps/v1", "example.com/v1alpha1"]) expect(apiVersionProblem(ok), ok).to.equal(undefined);
    for (const bad of ["../v1", "a/b/v1", "apps/V1", ""]) expect(apiVersionProblem(bad), bad).to.be.a("string");
  });
});
