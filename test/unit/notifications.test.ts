/** Notifications (automation/notify/): the stack setting, which pairs changed, redaction, and the Slack and Teams bodies. */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { decideAfterStatus, decideAfterUp, eventsFor, Memory, NotificationEvent, PairObservation } from "../../automation/notify/events";
import { deploysOf, observedAfterUp, recordedStates } from "../../automation/notify/observe";
import { MAX_MESSAGE_CHARS, redactMessage } from "../../automation/notify/redact";
import { MAX_CHAT_EVENTS, payloadsFor } from "../../automation/notify/formats";
import { DeploymentFailure } from "../../core/desired/failures";
import { PairReport } from "../../core/desired/pair";
import { DeploymentRecord } from "../../core/desired/records";
import { DeployEvent } from "../../automation/reports/deploy-events";
import { errorOf } from "../support/errors";

const FILE = "stacks/Pulumi.test.yaml";
const parse = (notifications: unknown) => parseStackConfig({ notifications }, FILE, "/project").notifications;
const ctx = { stack: "prod", time: "2030-01-01T00:00:00.000Z" };

const pair = (cluster: string, state: string, message = "", bundle = "web"): PairObservation => ({
  key: `${cluster}/apps/${bundle}`,
  gitRepo: "apps",
  bundle,
  cluster,
  state,
  message,
  deploymentId: `s-1:${bundle}`,
  commit: "abc123",
});
const summary = (events: NotificationEvent[]) => events.map((e) => `${e.type} ${e.cluster}/${e.bundle} ${e.previousState ?? "-"}->${e.state}`);

describe("notifications: the stack setting", () => {
  it("reads webhooks with their format and event types; defaults: json, every type", () => {
    expect(
      parse({
        webhooks: [
          { name: "ops", urlFromEnv: "OPS_HOOK" },
          { name: "chat", urlFromEnv: "SLACK_WEBHOOK_URL", format: "slack", events: ["failed", "drift"] },
        ],
      }),
    ).to.deep.equal({
      webhooks: [
        { name: "ops", urlFromEnv: "OPS_HOOK", format: "json", events: ["deployed", "failed", "held", "drift", "pruned"] },
        { name: "chat", urlFromEnv: "SLACK_WEBHOOK_URL", format: "slack", events: ["failed", "drift"] },
      ],
    });
    expect(parseStackConfig({}, FILE, "/project").notifications).to.equal(undefined);
  });

  it("refuses a URL in the stack file, and names the file and field of every mistake", () => {
    expect(errorOf(() => parse({ webhooks: [{ name: "a", url: "https://hooks.slack.com/services/T/B/x" }] })))
      .to.match(/^stacks\/Pulumi\.test\.yaml: notifications\.webhooks\[0\]\.url: a webhook URL is a credential/)
      .and.not.to.include("hooks.slack.com");
    expect(errorOf(() => parse({ webhooks: [{ name: "a", urlFromEnv: "not a name" }] }))).to.include(
      `${FILE}: notifications.webhooks[0].urlFromEnv: must be the name of an environment variable`,
    );
    expect(errorOf(() => parse({ webhooks: [{ name: "a", urlFromEnv: "A", format: "discord" }] }))).to.include(
      "notifications.webhooks[0].format: must be one of json, slack, teams",
    );
    expect(errorOf(() => parse({ webhooks: [{ name: "a", urlFromEnv: "A", events: ["deploy"] }] }))).to.include(
      "notifications.webhooks[0].events[0]: must be one of deployed, failed, held, drift, pruned",
    );
    expect(
      errorOf(() =>
        parse({
          webhooks: [
            { name: "a", urlFromEnv: "A" },
            { name: "a", urlFromEnv: "B" },
          ],
        }),
      ),
    ).to.include('notifications.webhooks[1].name: duplicate name "a"');
    expect(errorOf(() => parse({ hooks: [] }))).to.include("notifications.hooks: unknown field; valid fields are: kubernetesEvents, webhooks");
  });
});

describe("notifications: which pairs changed", () => {
  it("a first deploy, then a refused pair, then the same failure again, then its recovery", () => {
    const deployed = new Map([
      ["c1/apps/web", "Deployed bundle web to c1"],
      ["c2/apps/web", "Deployed bundle web to c2"],
    ]);
    const first = decideAfterUp({}, [pair("c1", "Ready"), pair("c2", "Ready")], deployed, [], ctx);
    expect(summary(first.events)).to.deep.equal(["deployed c1/web -->Ready", "deployed c2/web -->Ready"]);
    expect(first.events[0]).to.include({ message: "Deployed bundle web to c1", stack: "prod", commit: "abc123", deploymentId: "s-1:web", time: ctx.time });

    const refused = "ErrApplied: ConfigMap/ns/web: admission webhook denied: labelled deny";
    const second = decideAfterUp(first.memory, [pair("c1", "Ready"), pair("c2", "ErrApplied", refused)], new Map([["c1/apps/web", "Deployed"]]), [], ctx);
    expect(summary(second.events)).to.deep.equal(["deployed c1/web Ready->Ready", "failed c2/web Ready->ErrApplied"]);
    expect(second.events[1].message).to.equal(refused);

    const again = decideAfterUp(second.memory, [pair("c1", "Ready"), pair("c2", "ErrApplied", refused)], new Map(), [], ctx);
    expect(again.events, "an unchanged pair and the same failure send nothing").to.deep.equal([]);
    const otherWords = decideAfterUp(again.memory, [pair("c1", "Ready"), pair("c2", "ErrApplied", "ErrApplied: quota exceeded")], new Map(), [], ctx);
    expect(summary(otherWords.events)).to.deep.equal(["failed c2/web ErrApplied->ErrApplied"]);

    const fixed = decideAfterUp(
      otherWords.memory,
      [pair("c1", "Ready"), pair("c2", "Ready")],
      new Map([["c2/apps/web", "Deployed bundle web to c2"]]),
      [],
      ctx,
    );
    expect(summary(fixed.events)).to.deep.equal(["deployed c2/web ErrApplied->Ready"]);
  });

  it("held (a rollout's WaitApplied), pruned, and pairs seen before notifications started", () => {
    const recorded = recordedStates({ "c1/apps/web": { state: "Ready", messages: [], appliedDeploymentId: "s-1:web" } });
    const d = decideAfterUp(
      recorded,
      [pair("c1", "Ready"), pair("c2", "WaitApplied", "rollout paused at partition eu of bundle web")],
      new Map(),
      [{ ...pair("c3", "Ready"), message: "Pruned bundle web from c3" }],
      ctx,
    );
    expect(summary(d.events)).to.deep.equal(["held c2/web -->WaitApplied", "pruned c3/web -->Pruned"]);
    expect(d.events.find((e) => e.type === "pruned")).to.include({ cluster: "c3", state: "Pruned" });
    expect(Object.keys(d.memory).sort(), "pruned pairs are forgotten").to.deep.equal(["c1/apps/web", "c2/apps/web"]);
  });

  it("drift from status once, not again while unchanged; an up without --refresh does not call it deployed", () => {
    const memory: Memory = { "c1/apps/web": { state: "Ready", message: "" } };
    const drift = "modified ConfigMap ns/web (data)";
    const s1 = decideAfterStatus(memory, [pair("c1", "Modified", drift), pair("c2", "ErrApplied", "x")], ctx);
    expect(summary(s1.events), "status sends drift only").to.deep.equal(["drift c1/web Ready->Modified"]);
    expect(decideAfterStatus(s1.memory, [pair("c1", "Modified", drift)], ctx).events).to.deep.equal([]);
    const up = decideAfterUp(s1.memory, [pair("c1", "Ready")], new Map(), [], ctx);
    expect(up.events).to.deep.equal([]);
    expect(up.memory["c1/apps/web"].state).to.equal("Modified");
    const corrected = decideAfterUp(
      up.memory,
      [pair("c1", "Ready")],
      new Map([["c1/apps/web", "Deployed bundle web to c1 (0 created, 1 updated, 0 deleted)"]]),
      [],
      ctx,
    );
    expect(summary(corrected.events)).to.deep.equal(["deployed c1/web Modified->Ready"]);
    // Reverted by hand: status sees it Ready, says nothing, and the next drift is news again.
    const reverted = decideAfterStatus(s1.memory, [pair("c1", "Ready")], ctx);
    expect(reverted.events).to.deep.equal([]);
    expect(summary(decideAfterStatus(reverted.memory, [pair("c1", "Modified", drift)], ctx).events)).to.deep.equal(["drift c1/web Ready->Modified"]);
  });

  it("observes the desired state's failures over the pair's report, a rollout's hold as WaitApplied", () => {
    const states: Record<string, PairReport> = {
      "c1/apps/web": { state: "Ready", messages: [], appliedDeploymentId: "old" },
      "c2/apps/web": { state: "NotReady", messages: ["Deployment ns/web: 0 of 1 ready"], appliedDeploymentId: "new" },
      "c3/apps/web": { state: "Ready", messages: [], appliedDeploymentId: "old" },
    };
    const record = (cluster: string) => ({ gitRepo: "apps", bundle: "web", cluster, deploymentId: "new", commit: "c0ffee" }) as DeploymentRecord;
    const failures = [
      { gitRepo: "apps", bundle: "web", cluster: "c1", reason: "values.yaml: did not parse", message: "", file: "web/fleet.yaml", field: "helm.valuesFiles" },
      { gitRepo: "apps", bundle: "web", cluster: "c3", reason: "rollout paused at partition eu", message: "", field: "rolloutStrategy" },
      { gitRepo: "apps", bundle: "other", cluster: "", reason: "no clusters yet", message: "" },
    ] as DeploymentFailure[];
    const seen = observedAfterUp(states, { "c1/apps/web": record("c1"), "c2/apps/web": record("c2") }, failures);
    expect(seen.map((o) => [o.key, o.state, o.message, o.commit])).to.deep.equal([
      ["c1/apps/web", "ErrApplied", "web/fleet.yaml: values.yaml: did not parse", "c0ffee"],
      ["c2/apps/web", "NotReady", "Deployment ns/web: 0 of 1 ready", "c0ffee"],
      ["c3/apps/web", "WaitApplied", "rollout paused at partition eu", ""],
    ]);
    const ev: DeployEvent[] = [
      {
        event: "deployed",
        bundle: "web",
        cluster: "c2",
        gitRepo: "apps",
        deploymentId: "new",
        commit: "c0ffee",
        created: 1,
        updated: 0,
        replaced: 0,
        deleted: 0,
      },
      {
        event: "pruned",
        bundle: "web",
        cluster: "c9",
        gitRepo: "apps",
        deploymentId: "old",
        commit: "c0ffee",
        created: 0,
        updated: 0,
        replaced: 0,
        deleted: 2,
      },
    ];
    const { deployed, pruned } = deploysOf(ev);
    expect([...deployed.keys()]).to.deep.equal(["c2/apps/web"]);
    expect(pruned.map((p) => p.key)).to.deep.equal(["c9/apps/web"]);
  });

  it("each webhook gets only the types it asked for", () => {
    const d = decideAfterUp({}, [pair("c1", "Ready"), pair("c2", "ErrApplied", "no")], new Map([["c1/apps/web", "Deployed"]]), [], ctx);
    expect(eventsFor(d.events, ["failed"]).map((e) => e.cluster)).to.deep.equal(["c2"]);
  });
});

describe("notifications: redaction", () => {
  it("replaces credentials an API server or a tool may quote, keeps the rest", () => {
    const cases: [string, string][] = [
      [
        `Secret "db" is invalid: {"data":{"password":"aHVudGVyMg==","user":"YWRtaW4="},"kind":"Secret"}`,
        `Secret "db" is invalid: {"data":{"password":"[secret]","user":"[secret]"},"kind":"Secret"}`,
      ],
      ["stringData: map[token:abc123def456]", "stringData: map[token:[secret]]"],
      ["git clone https://bob:s3cr3tpass@git.example.com/a.git failed", "git clone https://[secret]@git.example.com/a.git failed"],
      ["Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl", "Authorization: Bearer [secret]"],
      ["annotation password=hunter2 refused", "annotation password=[secret] refused"],
      ["posting to https://hooks.slack.com/services/T000/B000/XXXX failed", "posting to https://hooks.slack.com/[secret] failed"],
      [
        "https://prod.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=AbCdEf123",
        "https://prod.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=[secret]",
      ],
      ["key -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- in values", "key [secret] in values"],
      ["token ghp_abcdefghijklmnopqrstuvwxyz0123 leaked", "token [secret] leaked"],
      [
        "ErrApplied: ConfigMap/refused-apply/b0: ConfigMaps labelled deny are refused here",
        "ErrApplied: ConfigMap/refused-apply/b0: ConfigMaps labelled deny are refused here",
      ],
    ];
    for (const [text, want] of cases) expect(redactMessage(text), text).to.equal(want);
    expect(redactMessage("calling https://example.com/hook/abc failed", ["https://example.com/hook/abc"])).to.equal("calling [secret] failed");
    const long = redactMessage("x".repeat(MAX_MESSAGE_CHARS + 10));
    expect(long.startsWith("x".repeat(MAX_MESSAGE_CHARS))).to.equal(true);
    expect(long).to.include("(cut;");
  });
});

describe("notifications: webhook bodies", () => {
  const events = decideAfterUp(
    {},
    [pair("c1", "Ready"), pair("c2", "ErrApplied", "ErrApplied: <denied> & refused")],
    new Map([["c1/apps/web", "Deployed bundle web to c1"]]),
    [],
    ctx,
  ).events;

  it("json: one request per event, the event itself", () => {
    expect(payloadsFor("json", events)).to.deep.equal(events);
    expect(Object.keys(events[0]).sort()).to.deep.equal([
      "bundle",
      "cluster",
      "commit",
      "deploymentId",
      "gitRepo",
      "message",
      "previousState",
      "stack",
      "state",
      "time",
      "type",
    ]);
    expect(payloadsFor("json", [])).to.deep.equal([]);
  });

  it("slack: one message with text and blocks, mrkdwn escaped as Slack asks", () => {
    const [msg] = payloadsFor("slack", events) as { text: string; blocks: { type: string; text?: { type: string; text: string } }[] }[];
    expect(msg.text).to.equal("pulumi-fleet, stack prod: 1 deployed, 1 failed");
    expect(msg.blocks.map((b) => b.type)).to.deep.equal(["header", "section", "section"]);
    expect(msg.blocks[0].text).to.deep.equal({ type: "plain_text", text: msg.text });
    expect(msg.blocks[2].text!.type).to.equal("mrkdwn");
    expect(msg.blocks[2].text!.text)
      .to.include("apps/web failed on c2: ErrApplied")
      .and.to.include("&lt;denied&gt; &amp; refused")
      .and.not.to.include("<denied>");
  });

  it("teams: a message with one Adaptive Card attachment", () => {
    const [msg] = payloadsFor("teams", events) as {
      type: string;
      attachments: { contentType: string; content: { type: string; version: string; body: { type: string; text: string }[] } }[];
    }[];
    expect(msg.type).to.equal("message");
    expect(msg.attachments).to.have.length(1);
    expect(msg.attachments[0].contentType).to.equal("application/vnd.microsoft.card.adaptive");
    const card = msg.attachments[0].content;
    expect([card.type, card.version]).to.deep.equal(["AdaptiveCard", "1.4"]);
    expect(card.body.every((b) => b.type === "TextBlock")).to.equal(true);
    expect(card.body.map((b) => b.text).join("\n"))
      .to.include("apps/web failed on c2: ErrApplied")
      .and.to.include("<denied> & refused");
  });

  it("a chat message lists at most MAX_CHAT_EVENTS and counts the rest", () => {
    const many = decideAfterUp(
      {},
      Array.from({ length: MAX_CHAT_EVENTS + 5 }, (_, i) => pair(`c${String(i).padStart(2, "0")}`, "ErrApplied", "no")),
      new Map(),
      [],
      ctx,
    ).events;
    const [slack] = payloadsFor("slack", many) as { blocks: { type: string; elements?: { text: string }[] }[] }[];
    expect(slack.blocks.filter((b) => b.type === "section")).to.have.length(MAX_CHAT_EVENTS);
    expect(slack.blocks[slack.blocks.length - 1].elements![0].text).to.include("and 5 more event(s)");
  });
});
