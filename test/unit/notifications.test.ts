/** Notifications (automation/notify/): the stack setting, which pairs changed, redaction, and the Slack and Teams bodies. */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { decideAfterStatus, decideAfterUp, eventsFor, Memory, NotificationEvent, PairObservation, REMEMBERED_CHARS } from "../../automation/notify/events";
import { deploysOf, observedAfterUp, recordedStates } from "../../automation/notify/observe";
import { MAX_MESSAGE_CHARS, redactMessage } from "../../automation/notify/redact";
import { MAX_CHAT_EVENTS, payloadsFor } from "../../automation/notify/formats";
import { MAX_CHAT_EVENTS_PER_GITREPO, selectForChat } from "../../automation/notify/fair";
import { DeploymentFailure } from "../../core/plan/failures";
import { PairReport } from "../../core/model/pair";
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
    // A failure is one event per pair and reason: its words (content's, the server's) changing is not a new one.
    const otherWords = decideAfterUp(again.memory, [pair("c1", "Ready"), pair("c2", "ErrApplied", "ErrApplied: quota exceeded")], new Map(), [], ctx);
    expect(otherWords.events, "the same failure in other words sends nothing").to.deep.equal([]);
    const otherReason = decideAfterUp(otherWords.memory, [pair("c1", "Ready"), pair("c2", "NotReady", "not ready")], new Map(), [], ctx);
    expect(summary(otherReason.events)).to.deep.equal(["failed c2/web ErrApplied->NotReady"]);
    const back = decideAfterUp(otherReason.memory, [pair("c1", "Ready"), pair("c2", "ErrApplied", "quota exceeded")], new Map(), [], ctx);
    expect(summary(back.events)).to.deep.equal(["failed c2/web NotReady->ErrApplied"]);

    const fixed = decideAfterUp(back.memory, [pair("c1", "Ready"), pair("c2", "Ready")], new Map([["c2/apps/web", "Deployed bundle web to c2"]]), [], ctx);
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

  it("what is remembered of a pair's words is bounded (they are content's), and a long drift is still sent once", () => {
    const long = `modified ${"ConfigMap ns/x ".repeat(10_000)}`;
    const s1 = decideAfterStatus({}, [pair("c1", "Modified", long), pair("c2", "ErrApplied", "y".repeat(100_000))], ctx);
    for (const r of Object.values(s1.memory)) expect(r.message.length).to.be.at.most(REMEMBERED_CHARS + 40);
    expect(decideAfterStatus(s1.memory, [pair("c1", "Modified", long)], ctx).events, "the same drift again").to.deep.equal([]);
    expect(decideAfterStatus(s1.memory, [pair("c1", "Modified", `${long}ConfigMap ns/z`)], ctx).events, "a longer list is news").to.have.length(1);
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
      "condition",
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
    // Failures first.
    expect(msg.blocks[1].text!.type).to.equal("mrkdwn");
    expect(msg.blocks[1].text!.text)
      .to.include("apps/web failed on c2: ErrApplied")
      .and.to.include("&lt;denied&gt; &amp; refused")
      .and.not.to.include("<denied>");
  });

  it("teams: a message with one Adaptive Card attachment", () => {
    const [msg] = payloadsFor("teams", events) as {
      type: string;
      attachments: { contentType: string; content: { type: string; version: string; body: { type: string; inlines: { type: string; text: string }[] }[] } }[];
    }[];
    expect(msg.type).to.equal("message");
    expect(msg.attachments).to.have.length(1);
    expect(msg.attachments[0].contentType).to.equal("application/vnd.microsoft.card.adaptive");
    const card = msg.attachments[0].content;
    expect([card.type, card.version]).to.deep.equal(["AdaptiveCard", "1.4"]);
    // Content is never a TextBlock's text (Markdown): each is a TextRun of a RichTextBlock, plain text.
    expect(card.body.every((b) => b.type === "RichTextBlock" && b.inlines.every((r) => r.type === "TextRun"))).to.equal(true);
    expect(card.body.flatMap((b) => b.inlines.map((r) => r.text)).join("\n"))
      .to.include("apps/web failed on c2: ErrApplied")
      .and.to.include("<denied> & refused");
  });

  it("a chat message lists at most MAX_CHAT_EVENTS, each GitRepo's capped, and counts the rest per GitRepo", () => {
    const repo = (name: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ ...pair(`c${String(i).padStart(2, "0")}`, "ErrApplied", "no"), key: `c${i}/${name}/web`, gitRepo: name }));
    const many = decideAfterUp({}, [...repo("a-noisy", 30), ...Array.from({ length: 5 }, (_, i) => repo(`team-${i}`, 4)).flat()], new Map(), [], ctx).events;
    const [slack] = payloadsFor("slack", many) as { blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[] }[];
    const sections = slack.blocks.filter((b) => b.type === "section").map((b) => b.text!.text);
    expect(sections).to.have.length(MAX_CHAT_EVENTS);
    // Turns by GitRepo: the noisy one (first by name) takes no more than its turn.
    expect(sections.filter((t) => t.includes("a-noisy/"))).to.have.length(4);
    expect(sections.filter((t) => t.includes("team-0/"))).to.have.length(4);
    for (let i = 1; i < 5; i++)
      expect(
        sections.filter((t) => t.includes(`team-${i}/`)),
        `team-${i}`,
      ).to.have.length(3);
    const context = slack.blocks.find((b) => b.type === "context")!.elements!.map((e) => e.text);
    expect(context).to.have.length(5);
    expect(context[0]).to.include("a-noisy").and.include("and 26 more (26 failed)");
    expect(context[1]).to.include("team-1").and.include("and 1 more (1 failed)");

    // A GitRepo's own cap: with room to spare, the noisy one still lists at most MAX_CHAT_EVENTS_PER_GITREPO.
    const few = decideAfterUp({}, [...repo("a-noisy", 30), ...repo("z-quiet", 1)], new Map(), [], ctx).events;
    const [quiet] = payloadsFor("slack", few) as { blocks: { type: string; text?: { text: string } }[] }[];
    const listed = quiet.blocks.filter((b) => b.type === "section").map((b) => b.text!.text);
    expect(listed.filter((t) => t.includes("a-noisy/"))).to.have.length(MAX_CHAT_EVENTS_PER_GITREPO);
    expect(listed.filter((t) => t.includes("z-quiet/"))).to.have.length(1);
  });
});

describe("notifications: fair between GitRepos", () => {
  const ev = (gitRepo: string, cluster: string, state: string): NotificationEvent => ({
    type: state === "Ready" ? "deployed" : "failed",
    stack: "prod",
    gitRepo,
    bundle: "web",
    cluster,
    state,
    previousState: null,
    condition: null,
    deploymentId: "",
    commit: "",
    message: "",
    time: ctx.time,
  });

  it("a GitRepo with a failure takes its turn before GitRepos that only deployed, whatever their names", () => {
    const deploys = Array.from({ length: 40 }, (_, i) => ev("a-platform", `c${i}`, "Ready"));
    const s = selectForChat([...deploys, ev("zz-team", "c1", "ErrApplied")]);
    expect(s.listed[0]).to.include({ gitRepo: "zz-team", state: "ErrApplied" });
    expect(s.leftOut).to.deep.equal([{ gitRepo: "a-platform", count: 35, byType: { deployed: 35 } }]);
  });

  it("each GitRepo's failures come before its deploys, and the GitRepos beyond the summary's lines share one", () => {
    const events = Array.from({ length: 30 }, (_, r) => [
      ev(`repo-${String(r).padStart(2, "0")}`, "c1", "Ready"),
      ev(`repo-${String(r).padStart(2, "0")}`, "c2", "ErrApplied"),
    ]).flat();
    const s = selectForChat(events, { total: 20, perGitRepo: 5, summaryLines: 3 });
    expect(s.listed).to.have.length(20);
    expect(s.listed.every((e) => e.state === "ErrApplied")).to.equal(true);
    expect(s.leftOut).to.have.length(3);
    // Those whose failures were left out get the summary's lines first.
    expect(s.leftOut[0]).to.deep.equal({ gitRepo: "repo-20", count: 2, byType: { failed: 1, deployed: 1 } });
    expect(s.otherGitRepos).to.deep.equal({ gitRepos: 27, events: 34 });
  });
});
