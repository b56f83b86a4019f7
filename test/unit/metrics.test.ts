/**
 * The operations' Prometheus metrics (automation/metrics/): the exposition read back by Prometheus's own
 * text parser (tools/metrics-check, expfmt), the pairs taken from an up's outputs and a status report,
 * the stack-file setting, the atomic textfile, and pushes to a real HTTP receiver on loopback.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as http from "node:http";
import { AddressInfo } from "node:net";
import * as path from "node:path";
import { parseStackConfig } from "../../core/config/stack";
import { fleetStateExposition, PairMetrics, runExposition, STATES } from "../../automation/metrics/exposition";
import { pairsAfterUp, pairsOfStatus } from "../../automation/metrics/pairs";
import { groupUrl, pushGroup, writeTextfile } from "../../automation/metrics/publish";
import { runFileName, stateFileName, withMetrics } from "../../automation/metrics/report";
import { PlanEntry } from "../../core/targeting/plan";
import { parseExposition, sampleValue } from "../support/metrics-parser";
import { errorOf } from "../support/errors";
import { tempDir } from "../support/git-fixtures";
import { record } from "../support/records";

const FILE = "stacks/Pulumi.test.yaml";
const parse = (metrics: unknown) => parseStackConfig({ metrics }, FILE, "/project").metrics;

/** A tiny HTTP server on loopback that records each request and answers with the next status given. */
async function receiver(
  statuses: number[] = [],
): Promise<{ url: string; requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[]; close: () => Promise<void> }> {
  const requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.statusCode = statuses.shift() ?? 200;
      res.end(res.statusCode === 200 ? "" : "refused here");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("metrics (automation/metrics)", function () {
  this.timeout(120_000);

  describe("the exposition, read by Prometheus's text parser", () => {
    const pairs: PairMetrics[] = [
      { gitRepo: "apps", bundle: "apps-web", cluster: "eu-1", state: "Ready", objects: 3, deployedAt: "2030-01-02T03:04:05.500Z" },
      { gitRepo: "apps", bundle: "apps-web", cluster: "eu-2", state: "ErrApplied", objects: 3 },
      { gitRepo: "apps", bundle: "apps-db", cluster: "eu-1", state: "Modified", objects: 1, deployedAt: "2030-01-01T00:00:00Z" },
      { gitRepo: "apps", bundle: "apps-broken", cluster: "", state: "ErrApplied" },
    ];
    const observedAt = new Date("2030-01-03T00:00:00Z");

    it("one state series per Fleet state and pair, 1 for its own; objects, drift and deployment time; HELP and TYPE gauge for each family", () => {
      const families = parseExposition(fleetStateExposition({ stack: "prod", observedAt, pairs }));
      expect(families.map((f) => [f.name, f.type])).to.deep.equal([
        ["pulumi_fleet_bundledeployment_deployed_timestamp_seconds", "gauge"],
        ["pulumi_fleet_bundledeployment_drifted", "gauge"],
        ["pulumi_fleet_bundledeployment_objects", "gauge"],
        ["pulumi_fleet_bundledeployment_state", "gauge"],
        ["pulumi_fleet_state_timestamp_seconds", "gauge"],
      ]);
      expect(families.every((f) => f.help.length > 20)).to.equal(true);
      const state = families.find((f) => f.name === "pulumi_fleet_bundledeployment_state")!;
      expect(state.samples).to.have.length(pairs.length * STATES.length);
      for (const p of pairs) {
        for (const s of STATES) {
          expect(
            sampleValue(families, state.name, { stack: "prod", git_repo: p.gitRepo, bundle: p.bundle, cluster: p.cluster, state: s }),
            `${p.bundle}/${p.cluster} ${s}`,
          ).to.equal(s === p.state ? 1 : 0);
        }
      }
      const web2 = { git_repo: "apps", bundle: "apps-web", cluster: "eu-2" };
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_objects", web2)).to.equal(3);
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_objects", { bundle: "apps-broken" })).to.equal(undefined);
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_drifted", { bundle: "apps-db" })).to.equal(1);
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_drifted", web2)).to.equal(0);
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_deployed_timestamp_seconds", { bundle: "apps-web", cluster: "eu-1" })).to.equal(
        Date.parse("2030-01-02T03:04:05.500Z") / 1000,
      );
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_deployed_timestamp_seconds", web2)).to.equal(undefined);
      expect(sampleValue(families, "pulumi_fleet_state_timestamp_seconds", { stack: "prod" })).to.equal(observedAt.getTime() / 1000);
      // Bounded labels: nothing that changes with every deploy.
      const labelNames = new Set(families.flatMap((f) => f.samples.flatMap((s) => Object.keys(s.labels))));
      expect([...labelNames].sort()).to.deep.equal(["bundle", "cluster", "git_repo", "stack", "state"]);
    });

    it("label values with a backslash, a double quote and a line feed come back exactly; a pair given twice is one series with its worst state", () => {
      const odd = 'a\\b "quoted"\nnext line';
      const families = parseExposition(
        fleetStateExposition({
          stack: "prod",
          observedAt,
          pairs: [
            { gitRepo: odd, bundle: "b", cluster: "c", state: "Ready" },
            { gitRepo: odd, bundle: "b", cluster: "c", state: "WaitApplied" },
          ],
        }),
      );
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_state", { git_repo: odd, state: "WaitApplied" })).to.equal(1);
      expect(sampleValue(families, "pulumi_fleet_bundledeployment_state", { git_repo: odd, state: "Ready" })).to.equal(0);
    });

    it("an empty fleet still says when it was read; the parser refuses a broken exposition (the check can fail)", () => {
      const families = parseExposition(fleetStateExposition({ stack: "prod", observedAt, pairs: [] }));
      expect(families.map((f) => f.name)).to.deep.equal(["pulumi_fleet_state_timestamp_seconds"]);
      expect(errorOf(() => parseExposition('pulumi_fleet_x{a="unterminated} 1\n'))).to.contain("Prometheus's parser refused");
      expect(errorOf(() => parseExposition("pulumi_fleet_x 1\npulumi_fleet_x 2\n"))).to.contain("given twice");
    });

    it("a run: success, duration, time and the engine's resources per step, labelled by stack and operation", () => {
      const finishedAt = new Date("2030-01-03T00:00:10Z");
      const failed = parseExposition(
        runExposition({ stack: "prod", operation: "up", success: false, durationMs: 12_345, finishedAt, engine: { same: 40, update: 2, create: 1 } }),
      );
      const labels = { stack: "prod", operation: "up" };
      expect(sampleValue(failed, "pulumi_fleet_run_success", labels)).to.equal(0);
      expect(sampleValue(failed, "pulumi_fleet_run_duration_seconds", labels)).to.equal(12.345);
      expect(sampleValue(failed, "pulumi_fleet_run_timestamp_seconds", labels)).to.equal(finishedAt.getTime() / 1000);
      expect(sampleValue(failed, "pulumi_fleet_engine_resources", { ...labels, step: "same" })).to.equal(40);
      expect(sampleValue(failed, "pulumi_fleet_engine_resources", { ...labels, step: "create" })).to.equal(1);
      const ok = parseExposition(runExposition({ stack: "prod", operation: "status", success: true, durationMs: 1, finishedAt }));
      expect(sampleValue(ok, "pulumi_fleet_run_success", { operation: "status" })).to.equal(1);
      expect(ok.map((f) => f.name)).to.not.include("pulumi_fleet_engine_resources");
    });
  });

  describe("each pair's facts", () => {
    const entry = (cluster: string, bundle: string) => ({ gitRepo: "apps", bundle, cluster }) as PlanEntry;

    it("after up: the provider's state and the new record; a pair that failed before the engine is ErrApplied with what it kept; an unreachable cluster's NotReady (Offline); a held one OutOfSync (Paused)", () => {
      const pairs = pairsAfterUp({
        entries: [entry("eu-1", "web"), entry("eu-2", "web"), entry("eu-3", "web")],
        failures: [
          { gitRepo: "apps", bundle: "db", cluster: "eu-1", reason: "x", message: "x" },
          { gitRepo: "apps", bundle: "bad", cluster: "", reason: "y", message: "y" },
          { gitRepo: "apps", bundle: "db", cluster: "eu-2", reason: "paused", message: "paused", held: "paused", kept: { deploymentId: "s-db:1", objects: 2 } },
        ],
        states: {
          "eu-1/apps/web": { state: "Ready", messages: [], appliedDeploymentId: "s-web:1" },
          "eu-2/apps/web": { state: "ErrApplied", messages: ["refused"], appliedDeploymentId: "" },
          // What the last update reported of the cluster now out of reach: not what it is now.
          "eu-3/apps/web": { state: "Ready", messages: [], appliedDeploymentId: "s-web:1" },
        },
        records: {
          "eu-1/apps/web": record("eu-1", "web", { deployedAt: "2030-01-01T00:00:00Z" }),
          "eu-2/apps/web": record("eu-2", "web"),
          "eu-1/apps/db": record("eu-1", "db", { objectCount: 7 }),
        },
        unreachable: new Map([["eu-3", "connection refused"]]),
      });
      expect(pairs).to.deep.equal([
        { gitRepo: "apps", bundle: "web", cluster: "eu-1", state: "Ready", objects: 3, deployedAt: "2030-01-01T00:00:00Z" },
        { gitRepo: "apps", bundle: "web", cluster: "eu-2", state: "ErrApplied", objects: 3 },
        { gitRepo: "apps", bundle: "web", cluster: "eu-3", state: "NotReady", condition: "Offline" },
        { gitRepo: "apps", bundle: "db", cluster: "eu-1", state: "ErrApplied", objects: 7 },
        { gitRepo: "apps", bundle: "bad", cluster: "", state: "ErrApplied" },
        // Held (its cluster paused): OutOfSync with its condition, as status says, not ErrApplied.
        { gitRepo: "apps", bundle: "db", cluster: "eu-2", state: "OutOfSync", condition: "Paused" },
      ]);
    });

    it("after status: its states, with the applied records' objects and deployment time", () => {
      const pairs = pairsOfStatus(
        [
          { gitRepo: "apps", bundle: "web", cluster: "eu-1", state: "Modified", deploymentId: "s-web:1", message: "modified" },
          { gitRepo: "apps", bundle: "web", cluster: "eu-2", state: "Pending", deploymentId: "s-web:1", message: "not deployed yet" },
        ],
        { "eu-1/apps/web": record("eu-1", "web", { deployedAt: "2030-01-01T00:00:00Z" }) },
      );
      expect(pairs).to.deep.equal([
        { gitRepo: "apps", bundle: "web", cluster: "eu-1", state: "Modified", objects: 3, deployedAt: "2030-01-01T00:00:00Z" },
        { gitRepo: "apps", bundle: "web", cluster: "eu-2", state: "Pending" },
      ]);
    });
  });

  describe("the stack file's metrics setting (core/config/metrics.ts)", () => {
    it("a textfile directory (resolved against the project) and a Pushgateway with its defaults", () => {
      expect(parse({ textfileDirectory: "textfile", pushgateway: { url: "https://push.example.com/base" } })).to.deep.equal({
        textfileDirectory: "/project/textfile",
        pushgateway: { url: "https://push.example.com/base", job: "pulumi-fleet", timeoutSeconds: 10 },
      });
      expect(parse({ pushgateway: { urlFromEnv: "PUSHGATEWAY_URL", job: "fleet.prod", timeoutSeconds: 3 } })).to.deep.equal({
        pushgateway: { urlFromEnv: "PUSHGATEWAY_URL", job: "fleet.prod", timeoutSeconds: 3 },
      });
      expect(parseStackConfig({}, FILE, "/project")).to.not.have.property("metrics");
    });

    it("bad input names the stack file and the field", () => {
      const cases: [unknown, string][] = [
        [{ textfile: "/x" }, "metrics.textfile: unknown field; valid fields are: pushgateway, textfileDirectory"],
        [{}, "metrics: names neither textfileDirectory nor pushgateway"],
        [{ textfileDirectory: "" }, "metrics.textfileDirectory: must not be empty"],
        [{ pushgateway: { job: "x" } }, "metrics.pushgateway: needs exactly one of url and urlFromEnv"],
        [{ pushgateway: { url: "u", urlFromEnv: "U" } }, "metrics.pushgateway: needs exactly one of url and urlFromEnv"],
        [{ pushgateway: { url: "ftp://h/" } }, "metrics.pushgateway.url: must be an http or https URL (got ftp)"],
        [{ pushgateway: { url: "not a url" } }, "metrics.pushgateway.url: must be an http or https URL"],
        [{ pushgateway: { url: "https://u:secret@h/" } }, "metrics.pushgateway.url: carries credentials: keep them out of the stack file with urlFromEnv"],
        [{ pushgateway: { url: "https://h/?a=b" } }, "metrics.pushgateway.url: must have no query or fragment"],
        [{ pushgateway: { urlFromEnv: "NOT-A-NAME" } }, "metrics.pushgateway.urlFromEnv: must be an environment variable's name"],
        [{ pushgateway: { url: "https://h", job: "a/b" } }, "metrics.pushgateway.job: must be letters"],
        [{ pushgateway: { url: "https://h", timeoutSeconds: 0 } }, "metrics.pushgateway.timeoutSeconds: must be more than 0 and at most 300"],
      ];
      for (const [metrics, message] of cases) expect(errorOf(() => parse(metrics))).to.contain(`${FILE}: ${message}`);
    });
  });

  describe("where it goes", () => {
    it("the textfile is replaced whole by a rename in its directory, and no temporary file stays", () => {
      const dir = tempDir("pf-textfile-");
      writeTextfile(dir, "a.prom", "old\n");
      writeTextfile(dir, "a.prom", "new\n");
      expect(fs.readFileSync(path.join(dir, "a.prom"), "utf8")).to.equal("new\n");
      expect(fs.readdirSync(dir)).to.deep.equal(["a.prom"]);
      expect(() => writeTextfile(path.join(dir, "missing"), "a.prom", "x")).to.throw(/ENOENT/);
    });

    it("the Pushgateway group's URL: job and grouping labels as escaped path segments under the base path", () => {
      expect(
        groupUrl("https://h:9091/base/", "pulumi-fleet", [
          ["stack", "prod/eu"],
          ["operation", "up"],
        ]).href,
      ).to.equal("https://h:9091/base/metrics/job/pulumi-fleet/stack/prod%2Feu/operation/up");
    });

    it("a push is a PUT of the group with the text format's content type; credentials in the URL become a basic Authorization header", async () => {
      const r = await receiver();
      try {
        const url = r.url.replace("http://", "http://fleet:s%40cret@");
        const problem = await pushGroup(
          { urlFromEnv: "PF_TEST_PUSHGATEWAY", job: "pulumi-fleet", timeoutSeconds: 5 },
          [["stack", "prod"]],
          "pulumi_fleet_x 1\n",
          { env: { PF_TEST_PUSHGATEWAY: url } },
        );
        expect(problem).to.equal(undefined);
        expect(r.requests.map((q) => [q.method, q.url, q.headers["content-type"], q.headers.authorization, q.body])).to.deep.equal([
          [
            "PUT",
            "/metrics/job/pulumi-fleet/stack/prod",
            "text/plain; version=0.0.4; charset=utf-8",
            `Basic ${Buffer.from("fleet:s@cret").toString("base64")}`,
            "pulumi_fleet_x 1\n",
          ],
        ]);
      } finally {
        await r.close();
      }
    });

    it("a 5xx is retried, a 4xx is not, and neither says the credentials", async () => {
      const r = await receiver([503, 502, 200, 400]);
      try {
        const cfg = { url: r.url, job: "j", timeoutSeconds: 5 };
        expect(await pushGroup(cfg, [["stack", "s"]], "x 1\n", { backoffMs: 10 })).to.equal(undefined);
        expect(r.requests).to.have.length(3);
        expect(await pushGroup(cfg, [["stack", "s"]], "x 1\n", { backoffMs: 10 })).to.equal(`${r.url}/metrics/job/j/stack/s answered 400: refused here`);
        expect(r.requests).to.have.length(4);
      } finally {
        await r.close();
      }
      expect(await pushGroup({ urlFromEnv: "PF_TEST_UNSET", job: "j", timeoutSeconds: 1 }, [], "", { env: {} })).to.equal(
        "the environment variable PF_TEST_UNSET (metrics.pushgateway.urlFromEnv) is not set",
      );
    });

    it("withMetrics: the operation's result and error pass unchanged; its files and pushes parse; a Pushgateway that is down is only a warning", async () => {
      const dir = tempDir("pf-textfile-");
      const r = await receiver();
      const warnings: string[] = [];
      const options = { stack: "prod", onWarning: (m: string) => warnings.push(m), push: { backoffMs: 10 } };
      const pairs: PairMetrics[] = [{ gitRepo: "apps", bundle: "web", cluster: "eu-1", state: "Ready", objects: 2 }];
      try {
        const config = async () => ({ textfileDirectory: dir, pushgateway: { url: r.url, job: "pulumi-fleet", timeoutSeconds: 5 } });
        const value = await withMetrics("up", options, async (m) => {
          m.config = config;
          m.engine = () => ({ same: 5 });
          m.pairs = pairs;
          return 42;
        });
        expect(value).to.equal(42);
        const failure = new Error("the operation's own error");
        const thrown = await withMetrics("up", options, async (m) => {
          m.config = config;
          m.pairs = [{ ...pairs[0], state: "ErrApplied" }];
          throw failure;
        }).catch((e) => e);
        expect(thrown).to.equal(failure);
        expect(warnings).to.deep.equal([]);
        expect(fs.readdirSync(dir).sort()).to.deep.equal([runFileName("prod", "up"), stateFileName("prod")].sort());
        const run = parseExposition(fs.readFileSync(path.join(dir, runFileName("prod", "up")), "utf8"));
        expect(sampleValue(run, "pulumi_fleet_run_success", { operation: "up" })).to.equal(0);
        const state = parseExposition(fs.readFileSync(path.join(dir, stateFileName("prod")), "utf8"));
        expect(sampleValue(state, "pulumi_fleet_bundledeployment_state", { cluster: "eu-1", state: "ErrApplied" })).to.equal(1);
        // Two runs, each a group of its own for the run and one for the fleet's state: four PUTs, each body parsed.
        expect(r.requests.map((q) => `${q.method} ${q.url}`)).to.deep.equal([
          "PUT /metrics/job/pulumi-fleet/stack/prod/operation/up",
          "PUT /metrics/job/pulumi-fleet/stack/prod",
          "PUT /metrics/job/pulumi-fleet/stack/prod/operation/up",
          "PUT /metrics/job/pulumi-fleet/stack/prod",
        ]);
        for (const q of r.requests) expect(parseExposition(q.body).length).to.be.greaterThan(0);
        expect(sampleValue(parseExposition(r.requests[0].body), "pulumi_fleet_engine_resources", { step: "same" })).to.equal(5);
      } finally {
        await r.close();
      }
      // Down: nothing listens there any more. The operation still succeeds; the warning names where and why.
      const down = await withMetrics("status", options, async (m) => {
        m.config = async () => ({ pushgateway: { url: r.url, job: "j", timeoutSeconds: 2 } });
        return "done";
      });
      expect(down).to.equal("done");
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.match(
        /^warning: stack prod: metrics: the push to the Pushgateway failed: http:\/\/127\.0\.0\.1:\d+\/metrics\/job\/j\/stack\/prod\/operation\/status: .*ECONNREFUSED.* \(after 3 attempts\)$/,
      );
      // Not configured: nothing written, nothing said.
      await withMetrics("up", options, async () => undefined);
      expect(warnings).to.have.length(1);
    });
  });
});
