/** Posting notifications to a local HTTP receiver: retries, what is not retried, bounds, and warnings that never show a URL. */
import { expect } from "chai";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { AddressInfo } from "node:net";
import { deliver, DeliveryPolicy, postWithRetries } from "../../automation/notify/deliver";
import { notifyAfterStatus, notifyAfterUp, UpFacts } from "../../automation/notify/notify";
import { DeploymentStatus } from "../../automation/reports/status";

/** Fast pauses, the real shape. */
const FAST: DeliveryPolicy = { attempts: 3, backoffMs: [20, 40], attemptTimeoutMs: 300, webhookDeadlineMs: 5000, parallel: 4 };

interface Receiver {
  url: string;
  bodies: unknown[];
  hits: number;
  close: () => Promise<void>;
}

/** Answers each request with the next status of `answers` (the last repeats); "hang" never answers. */
async function receiver(answers: (number | "hang")[]): Promise<Receiver> {
  const r = { bodies: [] as unknown[], hits: 0 } as Receiver;
  const server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const answer = answers[Math.min(r.hits++, answers.length - 1)];
      if (answer === "hang") return;
      if (answer >= 200 && answer < 300) r.bodies.push(JSON.parse(text));
      res.writeHead(answer, answer === 429 ? { "retry-after": "0" } : {}).end(answer < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T0/B0/s3cr3t-path`;
  r.close = () =>
    new Promise((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return r;
}

describe("notifications: delivery", function () {
  const open: Receiver[] = [];
  const serve = async (answers: (number | "hang")[]) => {
    const r = await receiver(answers);
    open.push(r);
    return r;
  };
  after(async () => {
    for (const r of open) await r.close();
  });

  it("retries a 500 and delivers on the 200 that follows", async () => {
    const r = await serve([500, 200]);
    const out = await postWithRetries(r.url, { n: 1 }, FAST, Date.now() + 5000);
    expect(out).to.include({ ok: true, attempts: 2 });
    expect(r.bodies).to.deep.equal([{ n: 1 }]);
  });

  it("retries 429 and 503 up to the attempts; does not retry another 4xx", async () => {
    const busy = await serve([429, 503, 503, 200]);
    expect(await postWithRetries(busy.url, {}, FAST, Date.now() + 5000)).to.include({ ok: false, attempts: 3, why: "HTTP 503" });
    const gone = await serve([404]);
    expect(await postWithRetries(gone.url, {}, FAST, Date.now() + 5000)).to.include({ ok: false, attempts: 1, why: "HTTP 404" });
    expect(gone.hits).to.equal(1);
  });

  it("an attempt that gets no answer ends at its timeout; the webhook's deadline ends the rest", async () => {
    const r = await serve(["hang"]);
    const started = Date.now();
    const [d] = await deliver([{ name: "slow", url: r.url, payloads: [1, 2, 3] }], { ...FAST, webhookDeadlineMs: 500 });
    expect(Date.now() - started).to.be.below(2000);
    expect(d).to.include({ name: "slow", sent: 0, total: 3 });
    expect(d.problem).to.match(/^no answer within 0\.\d+ s after \d attempt\(s\)$/);
  });

  it("notifyAfterUp: sends each change once, keeps what it said beside the state, warns by name and never shows a URL", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-notify-"));
    try {
      const json = await serve([200]);
      const slack = await serve([500, 200]);
      const down = await serve([503]);
      const warnings: string[] = [];
      const env = { JSON_HOOK: json.url, SLACK_HOOK: slack.url, DOWN_HOOK: down.url };
      const options = {
        stack: "prod",
        backend: { url: `file://${dir}`, source: "test", fileDir: dir, localDir: dir },
        warn: (m: string) => warnings.push(m),
        env,
        policy: FAST,
        config: {
          webhooks: [
            { name: "ops", urlFromEnv: "JSON_HOOK", format: "json" as const, events: ["deployed", "failed", "held", "drift", "pruned"] as const },
            { name: "chat", urlFromEnv: "SLACK_HOOK", format: "slack" as const, events: ["failed"] as const },
            { name: "pager", urlFromEnv: "DOWN_HOOK", format: "json" as const, events: ["failed"] as const },
            { name: "unset", urlFromEnv: "NOT_SET_ANYWHERE", format: "teams" as const, events: ["failed"] as const },
          ].map((w) => ({ ...w, events: [...w.events] })),
        },
      };
      const rec = (cluster: string) => ({
        gitRepo: "apps",
        bundle: "web",
        cluster,
        target: "",
        deploymentId: "s-1:web",
        commit: "abc",
        namespace: "ns",
        paused: false,
        objectCount: 1,
        revision: 1,
      });
      const facts: UpFacts = {
        statesBefore: {},
        before: {},
        failures: [],
        statesAfter: {
          "c1/apps/web": { state: "Ready", messages: [], appliedDeploymentId: "s-1:web" },
          "c2/apps/web": { state: "ErrApplied", messages: [`ConfigMap/ns/web: refused; token=abcd1234efgh posting to ${down.url}`], appliedDeploymentId: "" },
        },
        after: { "c1/apps/web": rec("c1"), "c2/apps/web": rec("c2") },
        deploys: [
          {
            event: "deployed",
            bundle: "web",
            cluster: "c1",
            gitRepo: "apps",
            deploymentId: "s-1:web",
            commit: "abc",
            created: 1,
            updated: 0,
            replaced: 0,
            deleted: 0,
          },
        ],
      };
      const sent = await notifyAfterUp(options, facts);
      expect(sent.map((e) => `${e.type} ${e.cluster}`)).to.deep.equal(["deployed c1", "failed c2"]);
      expect(json.bodies.map((b) => (b as { type: string }).type)).to.deep.equal(["deployed", "failed"]);
      const failed = json.bodies[1] as { message: string };
      expect(failed.message).to.equal("ConfigMap/ns/web: refused; token=[secret] posting to [secret]");
      expect(slack.bodies).to.have.length(1);
      expect((slack.bodies[0] as { text: string }).text).to.equal("pulumi-fleet, stack prod: 1 failed");
      expect(warnings).to.deep.equal([
        'warning: stack prod: notifications: webhook "unset": environment variable NOT_SET_ANYWHERE is not set; 1 message(s) not sent',
        'warning: stack prod: notifications: webhook "pager": not delivered (HTTP 503 after 3 attempt(s)); 1 of 1 message(s) not sent',
      ]);
      for (const w of warnings) expect(w).not.to.include("127.0.0.1");
      expect(fs.existsSync(path.join(dir, "notified.prod.json"))).to.equal(true);

      // The same states again: nothing is news.
      const again = await notifyAfterUp(options, { ...facts, statesBefore: facts.statesAfter, before: facts.after, deploys: [] });
      expect(again).to.deep.equal([]);
      expect(json.bodies).to.have.length(2);

      // status finds drift once.
      const drifted: DeploymentStatus = {
        gitRepo: "apps",
        bundle: "web",
        cluster: "c1",
        state: "Modified",
        deploymentId: "s-1:web",
        appliedDeploymentId: "s-1:web",
        message: "modified ConfigMap ns/web (data)",
      };
      expect((await notifyAfterStatus(options, [drifted], facts.after, facts.statesAfter)).map((e) => e.type)).to.deep.equal(["drift"]);
      expect(await notifyAfterStatus(options, [drifted], facts.after, facts.statesAfter)).to.deep.equal([]);
      expect(json.bodies.map((b) => (b as { type: string }).type)).to.deep.equal(["deployed", "failed", "drift"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without webhooks nothing is read or written", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-notify-"));
    try {
      const out = await notifyAfterUp(
        {
          stack: "s",
          config: undefined,
          backend: { url: `file://${dir}`, source: "t", fileDir: dir, localDir: dir },
          warn: () => {
            throw new Error("no warning expected");
          },
        },
        {
          statesBefore: {},
          statesAfter: { "c/a/b": { state: "ErrApplied", messages: [], appliedDeploymentId: "" } },
          before: {},
          after: {},
          failures: [],
          deploys: [],
        },
      );
      expect(out).to.deep.equal([]);
      expect(fs.readdirSync(dir)).to.deep.equal([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
