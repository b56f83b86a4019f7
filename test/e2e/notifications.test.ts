/**
 * Notifications through the project's own operations on the live clusters, to a local HTTP receiver
 * (automation/notify/): a first `up` sends one `deployed` event per pair; a change one cluster's
 * admission policy refuses sends `failed` for that pair with the server's words (and `deployed` for the
 * others), to the JSON webhook and as one Slack message; the same `up` again sends nothing; `status`
 * sends a hand edit's drift once.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { AddressInfo } from "node:net";
import { kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { NotificationEvent } from "../../automation/notify/events";
import { StackConfig } from "../../core/config/stack";
import { tempDir } from "../support/git-fixtures";
import { liftPolicy, refuseLabelledConfigMaps, writeConfigMapBundles } from "../support/admission";
import { liveStackConfig } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "notify-e2e";
const POLICY = "notify-refuse-deny";
const BUNDLES = ["n0", "n1"];
const MESSAGE = "ConfigMaps labelled deny are refused by the platform team";

describe("notifications: a team's webhooks hear of each pair's state change, once", function () {
  this.timeout(15 * 60_000);
  const work = tempDir("pf-notify-");
  const repoDir = path.join(work, "repo");
  const received: { json: NotificationEvent[]; slack: { text: string; blocks: unknown[] }[] } = { json: [], slack: [] };
  let server: http.Server;
  let clusters: LocalCluster[];
  let config: StackConfig;
  const warnings: string[] = [];
  const write = (version: number, denied?: string) => writeConfigMapBundles(repoDir, BUNDLES, NS, () => version, denied);
  const options = (): ops.OperationOptions => ({
    stack: "notify",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "notify" },
    onWarning: (m) => warnings.push(m),
  });
  const take = () => {
    const out = {
      json: received.json.map((e) => `${e.type} ${e.cluster}/${e.bundle} ${e.previousState ?? "-"}->${e.state}`).sort(),
      slack: [...received.slack],
      events: [...received.json],
    };
    received.json = [];
    received.slack = [];
    return out;
  };

  before(async function () {
    toolchain();
    clusters = liveClusters().clusters.slice(0, 2);
    server = http.createServer((req, res) => {
      let text = "";
      req.on("data", (c) => (text += c));
      req.on("end", () => {
        const body = JSON.parse(text);
        if (req.url === "/json") received.json.push(body);
        else received.slack.push(body);
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const port = (server.address() as AddressInfo).port;
    process.env.PF_TEST_JSON_HOOK = `http://127.0.0.1:${port}/json`;
    process.env.PF_TEST_SLACK_HOOK = `http://127.0.0.1:${port}/services/T0/B0/slack-secret`;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write(1);
    config = liveStackConfig(
      "notify",
      clusters,
      { dir: repoDir, paths: BUNDLES },
      {
        agent: { enabled: false },
        stack: {
          notifications: {
            webhooks: [
              { name: "ops", urlFromEnv: "PF_TEST_JSON_HOOK", format: "json", events: ["deployed", "failed", "held", "drift", "pruned"] },
              { name: "team-chat", urlFromEnv: "PF_TEST_SLACK_HOOK", format: "slack", events: ["failed", "drift"] },
            ],
          },
        },
      },
    );
  });

  after(async function () {
    if (clusters) await liftPolicy(clusters[1], POLICY);
    if (config) await ops.destroy(options()).catch(() => undefined);
    for (const c of clusters ?? [])
      try {
        await kubeRequest(c, "DELETE", `/api/v1/namespaces/${NS}`);
      } catch {
        /* gone */
      }
    delete process.env.PF_TEST_JSON_HOOK;
    delete process.env.PF_TEST_SLACK_HOOK;
    await new Promise((ok) => {
      server?.closeAllConnections();
      server?.close(ok);
    });
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("deployed on the first up, failed with the server's words for the refused pair, nothing for an unchanged up, drift from status once", async () => {
    const [one, two] = clusters.map((c) => c.name);
    await ops.up(options());
    let got = take();
    expect(got.json).to.deep.equal(
      [
        `deployed ${one}/notify-n0 -->Ready`,
        `deployed ${one}/notify-n1 -->Ready`,
        `deployed ${two}/notify-n0 -->Ready`,
        `deployed ${two}/notify-n1 -->Ready`,
      ].sort(),
    );
    expect(got.events[0]).to.include({ stack: "notify", gitRepo: "notify", state: "Ready", previousState: null });
    expect(got.events[0].commit, "the commit (a plain directory: its content hash)").to.match(/^dir-[0-9a-f]+$/);
    expect(got.slack, "the chat webhook asked for failures and drift only").to.deep.equal([]);

    await refuseLabelledConfigMaps(clusters[1], POLICY, MESSAGE, NS);
    write(2, "n0");
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed).to.be.instanceOf(ops.BundlesFailedError);
    got = take();
    expect(got.json).to.deep.equal(
      [
        `deployed ${one}/notify-n0 Ready->Ready`,
        `deployed ${one}/notify-n1 Ready->Ready`,
        `deployed ${two}/notify-n1 Ready->Ready`,
        `failed ${two}/notify-n0 Ready->ErrApplied`,
      ].sort(),
    );
    const refused = got.events.find((e) => e.type === "failed")!;
    expect(refused.message).to.include(`ConfigMap/${NS}/n0`).and.to.include(MESSAGE);
    expect(got.slack).to.have.length(1);
    expect(got.slack[0].text).to.equal("pulumi-fleet, stack notify: 1 failed");
    expect(JSON.stringify(got.slack[0].blocks)).to.include(MESSAGE);

    // The same commit, the policy still there: the pair fails again with the same words, the others are as they were.
    await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    got = take();
    expect(got.json, "an unchanged up sends nothing").to.deep.equal([]);
    expect(got.slack).to.deep.equal([]);

    // A hand edit: status finds the drift and says it once.
    await kubeRequest(clusters[0], "PATCH", `/api/v1/namespaces/${NS}/configmaps/n1`, { body: { data: { version: "edited" } } });
    await ops.status(options());
    got = take();
    expect(got.json).to.deep.equal([`drift ${one}/notify-n1 Ready->Modified`]);
    expect(got.events[0].message).to.include("n1");
    expect(got.slack).to.have.length(1);
    await ops.status(options());
    expect(take().json, "the same drift again sends nothing").to.deep.equal([]);
    expect(warnings.filter((w) => w.includes("notifications"))).to.deep.equal([]);
  });
});
