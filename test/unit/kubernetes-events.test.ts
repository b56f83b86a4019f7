/**
 * notifications.kubernetesEvents (core/config/notifications.ts): read from the stack file, and carried
 * by each pair as its `kubernetesEvents` input (the bundle's namespace, GitRepo and name) only when true,
 * so a stack without it registers exactly what it did before. The provider's side (which state change
 * posts which Event) is tools/fleet-provider events_test.go; the live one test/e2e/kubernetes-events.test.ts.
 */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { kubernetesEventsInput } from "../../core/config/notifications";
import { desiredState } from "../../core/desired/state";
import { errorOf } from "../support/errors";
import { fakeFacts } from "../support/fake-facts";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

const FILE = "stacks/Pulumi.test.yaml";
const parse = (notifications: unknown) => parseStackConfig({ notifications }, FILE, "/project").notifications;

describe("notifications.kubernetesEvents", function () {
  this.timeout(120_000);

  it("is read alone or beside webhooks, false by default, and refused when not a boolean", () => {
    expect(parse({ kubernetesEvents: true })).to.deep.equal({ webhooks: [], kubernetesEvents: true });
    expect(parse({ webhooks: [], kubernetesEvents: false })).to.deep.equal({ webhooks: [] });
    expect(errorOf(() => parse({ kubernetesEvents: "yes" }))).to.equal(`${FILE}: notifications.kubernetesEvents: must be true or false (got string "yes")`);
    expect(kubernetesEventsInput(undefined, { namespace: "web", gitRepo: "apps", bundle: "web" })).to.deep.equal({});
    expect(kubernetesEventsInput({ webhooks: [] }, { namespace: "web", gitRepo: "apps", bundle: "web" })).to.deep.equal({});
  });

  it("each pair carries its bundle's namespace when on, and nothing of it when off", async () => {
    const cacheRoot = tempDir("pf-cache-");
    const render = "/tmp/pulumi-fleet-render";
    const off = await desiredState({ ...localStack(render), notifications: { webhooks: [] } }, fakeFacts(), { cacheRoot });
    expect(off.deployments.length).to.be.greaterThan(0);
    expect(off.deployments.every((d) => !("kubernetesEvents" in d.spec))).to.equal(true);
    const on = await desiredState({ ...localStack(render), notifications: { webhooks: [], kubernetesEvents: true } }, fakeFacts(), { cacheRoot });
    expect(on.deployments.map((d) => d.spec.kubernetesEvents)).to.deep.equal(
      on.deployments.map((d) => ({ namespace: d.entry!.namespace, gitRepo: d.gitRepo, bundle: d.entry!.bundle })),
    );
    expect(on.deployments.map((d) => ({ ...d.spec, kubernetesEvents: undefined }))).to.deep.equal(
      off.deployments.map((d) => ({ ...d.spec, kubernetesEvents: undefined })),
    );
  });
});
