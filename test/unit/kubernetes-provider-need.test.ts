import { expect } from "chai";
import { needsKubernetesProvider } from "../../automation/engine/toolchain";

const r = (type: string, custom = true) => ({ type, custom });

describe("the Kubernetes provider is built only for a stack whose state needs it", () => {
  it("a new stack, or one holding only BundleDeployments and components, does not need it", () => {
    expect(needsKubernetesProvider([])).to.equal(false);
    expect(
      needsKubernetesProvider([
        r("pulumi:pulumi:Stack", false),
        r("pulumi:providers:pulumi-fleet"),
        r("pulumi-fleet:index:BundleDeployment"),
        r("fleet:pair", false),
      ]),
    ).to.equal(false);
  });

  it("an earlier version's custom resources or its provider instances need it; its resources the migration left state-only do not", () => {
    expect(needsKubernetesProvider([r("pulumi:pulumi:Stack", false), r("kubernetes:core/v1:Namespace")])).to.equal(true);
    expect(needsKubernetesProvider([r("pulumi:providers:kubernetes")])).to.equal(true);
    expect(needsKubernetesProvider([r("kubernetes:core/v1:Namespace", false), r("kubernetes:helm.sh/v4:Chart", false)])).to.equal(false);
  });
});
