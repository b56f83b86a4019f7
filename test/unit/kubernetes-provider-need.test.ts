import { expect } from "chai";
import { needsKubernetesProvider } from "../../automation/engine/toolchain";

describe("the Kubernetes provider is built only for a stack whose state needs it", () => {
  it("a new stack, or one holding only BundleDeployments and components, does not need it", () => {
    expect(needsKubernetesProvider([])).to.equal(false);
    expect(needsKubernetesProvider(["pulumi:pulumi:Stack", "pulumi:providers:pulumi-fleet", "pulumi-fleet:index:BundleDeployment", "fleet:pair"])).to.equal(
      false,
    );
  });

  it("an earlier version's per-object resources or its provider instances need it", () => {
    expect(needsKubernetesProvider(["pulumi:pulumi:Stack", "kubernetes:core/v1:Namespace"])).to.equal(true);
    expect(needsKubernetesProvider(["pulumi:providers:kubernetes"])).to.equal(true);
  });
});
