/**
 * Sinks against a hostile team, with the real parts: the CLI's output of a bundle whose directory
 * name and template `fail` message carry CI workflow commands, escape sequences and Markdown (a real
 * `npm run render` process), and render mode's files on the real engine, where one team's object
 * named to collide with another's under the earlier file names must neither overwrite the other's file
 * nor delete it when pruned, and chat notifications (Slack, Teams) to a local receiver, where a noisy
 * team's failures on many clusters, in words that change on every run, must not hide another team's
 * failure nor bring a link, image or mention into the channel (issue 53, "every sink escapes content").
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import { AddressInfo } from "node:net";
import * as path from "node:path";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { parseStackConfig } from "../../core/config/stack";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { tempDir } from "../support/git-fixtures";

const COMMAND_LINE = /^\s*(::|##\[|##vso\[)/i;
const configMap = (namespace: string, name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  owner: ${value}\n`;

describe("attacks: sinks (real CLI, real engine in render mode)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-sinks-");

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  it("a bundle's name and its template's `fail` words start no workflow command in the CLI's output", () => {
    const repo = path.join(work, "cli-repo");
    const name = "evil\n::error::from-dir-name\r::add-mask::x";
    const dir = path.join(repo, name);
    fs.mkdirSync(path.join(dir, "templates"), { recursive: true });
    fs.writeFileSync(path.join(dir, "Chart.yaml"), "apiVersion: v2\nname: evil\nversion: 0.1.0\n");
    fs.writeFileSync(
      path.join(dir, "templates", "fail.yaml"),
      `{{ fail "pwned\\n::error title=x::from-fail\\r::stop-commands::tok\\n##[group]hidden\\n\\u2028::set-output name=a::b\\n\\x1b[2J\\x1b]8;;https://evil.example\\x07link" }}\n`,
    );
    // The same chart under a plain name: its `fail` words reach the output whatever the directory's name does.
    fs.cpSync(dir, path.join(repo, "plain"), { recursive: true });
    const run = spawnSync(
      process.execPath,
      [path.join(PROJECT_DIR, "scripts/run-ts.js"), path.join(PROJECT_DIR, "scripts/render.ts"), repo, "--path", name, "--path", "plain"],
      {
        cwd: PROJECT_DIR,
        encoding: "utf8",
        env: { ...process.env, PULUMI_FLEET_SKIP_TOOLS: "1" },
        timeout: 5 * 60_000,
      },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).to.not.equal(0); // the bundle fails, visibly
    expect(output, "the words are still there").to.include("pwned").and.include("from-fail").and.include("from-dir-name");
    // eslint-disable-next-line no-control-regex -- what must not reach the log
    expect(output).to.not.match(/[\x1b\x9b\r\u2028]/);
    for (const line of output.split("\n")) expect(line, output).to.not.match(COMMAND_LINE);
  });

  it("render mode: one team's object named to collide with another's neither overwrites nor prunes the other's file", async () => {
    const renderDir = path.join(work, "render");
    const repos = { victim: path.join(work, "victim"), attacker: path.join(work, "attacker") };
    fs.mkdirSync(repos.victim, { recursive: true });
    fs.mkdirSync(repos.attacker, { recursive: true });
    // Under the earlier names both were 1-manifest/v1-configmap-team-b-cfg.yaml.
    fs.writeFileSync(path.join(repos.victim, "cm.yaml"), configMap("team-b", "cfg", "victim"));
    fs.writeFileSync(path.join(repos.attacker, "cm.yaml"), configMap("team", "b-cfg", "attacker"));
    const config = (withAttacker: boolean) =>
      parseStackConfig(
        {
          renderDir,
          agent: { enabled: false },
          clusters: [{ name: "c1" }],
          gitRepos: [
            { name: "victim", repo: repos.victim, targets: [{ clusterName: "c1" }] },
            ...(withAttacker ? [{ name: "attacker", repo: repos.attacker, targets: [{ clusterName: "c1" }] }] : []),
          ],
        },
        "stacks/Pulumi.sinks.yaml",
        work,
      );
    const options = (withAttacker: boolean): ops.OperationOptions => ({
      stack: "sinks",
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config: config(withAttacker),
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: "sinks" },
    });
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    const victimFile = path.join(renderDir, "c1", "1-manifest", "v1_ConfigMap_team-b_cfg.yaml");
    const attackerFile = path.join(renderDir, "c1", "1-manifest", "v1_ConfigMap_team_b-cfg.yaml");

    await ops.up(options(true));
    expect(fs.readFileSync(victimFile, "utf8")).to.include("owner: victim");
    expect(fs.readFileSync(attackerFile, "utf8")).to.include("owner: attacker");

    // The attacker's GitRepo leaves: its pair is deleted, and with it only its own file.
    await ops.up(options(false));
    expect(fs.existsSync(attackerFile)).to.equal(false);
    expect(fs.readFileSync(victimFile, "utf8")).to.include("owner: victim");
  });

  it("chat: a noisy team's many failures, in changing words, neither hide another team's failure nor post links or mentions", async () => {
    const received: { url: string; body: Record<string, unknown> }[] = [];
    const server = http.createServer((req, res) => {
      let text = "";
      req.on("data", (c) => (text += c));
      req.on("end", () => {
        received.push({ url: req.url ?? "", body: JSON.parse(text) });
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const port = (server.address() as AddressInfo).port;
    try {
      const clusters = Array.from({ length: 24 }, (_, i) => `c${String(i).padStart(2, "0")}`);
      const chart = (dir: string, words: string) => {
        fs.mkdirSync(path.join(dir, "templates"), { recursive: true });
        fs.writeFileSync(path.join(dir, "Chart.yaml"), "apiVersion: v2\nname: x\nversion: 0.1.0\n");
        fs.writeFileSync(path.join(dir, "templates", "fail.yaml"), `{{ fail ${JSON.stringify(words)} }}\n`);
      };
      const noisy = path.join(work, "noisy");
      const victim = path.join(work, "quiet");
      const hostile = (run: number) => `run ${run}: [click](https://evil.example/x) ![i](https://evil.example/p.png) @channel <!here> <at>all</at>`;
      chart(path.join(noisy, "app"), hostile(1));
      chart(path.join(victim, "app"), "the victim's own failure");
      const config = parseStackConfig(
        {
          renderDir: path.join(work, "chat-render"),
          agent: { enabled: false },
          clusters: clusters.map((name) => ({ name, labels: { name } })),
          gitRepos: [
            { name: "a-noisy", repo: noisy, paths: ["app"], targets: [{ clusterSelector: {} }] },
            { name: "z-quiet", repo: victim, paths: ["app"], targets: [{ clusterName: "c00" }] },
          ],
          notifications: {
            webhooks: [
              { name: "slack", urlFromEnv: "PF_SINKS_SLACK", format: "slack" },
              { name: "teams", urlFromEnv: "PF_SINKS_TEAMS", format: "teams" },
            ],
          },
        },
        "stacks/Pulumi.chat.yaml",
        work,
      );
      const options: ops.OperationOptions = {
        stack: "chat",
        stateDir: path.join(work, "chat-state"),
        stackConfigDir: path.join(work, "stacks"),
        config,
        deploy: { cacheRoot: path.join(work, "git-cache") },
        env: { PULUMI_CONFIG_PASSPHRASE: "chat" },
      };
      process.env.PF_SINKS_SLACK = `http://127.0.0.1:${port}/slack`;
      process.env.PF_SINKS_TEAMS = `http://127.0.0.1:${port}/teams`;
      await ops.up(options).catch((e: Error) => expect(e).to.be.instanceOf(ops.BundlesFailedError));

      const slack = received.find((r) => r.url === "/slack")!.body as { blocks: { type: string; text?: { text: string } }[] };
      const sections = slack.blocks.filter((b) => b.type === "section").map((b) => b.text!.text);
      expect(
        sections.some((t) => t.includes("z-quiet/")),
        JSON.stringify(slack),
      ).to.equal(true);
      expect(sections.filter((t) => t.includes("a-noisy/")).length).to.be.at.most(5);
      const slackText = JSON.stringify(slack);
      expect(slackText).to.not.match(/<!here>|<https?:|@channel|https:\/\/evil/);
      expect(slackText).to.include("a-noisy").and.include("more (").and.include("click").and.include("the victim's own failure");

      const teams = received.find((r) => r.url === "/teams")!.body as { attachments: { content: { body: { type: string }[] } }[] };
      const body = teams.attachments[0].content.body;
      expect(
        body.every((b) => b.type === "RichTextBlock"),
        "content is never a Markdown TextBlock",
      ).to.equal(true);
      expect(JSON.stringify(teams)).to.not.match(/@channel|https:\/\/evil/);
      expect(JSON.stringify(teams)).to.include("z-quiet").and.include("click");

      // The same failures in other words: one event per pair and reason, so nothing new to say.
      received.length = 0;
      chart(path.join(noisy, "app"), hostile(2));
      await ops.up(options).catch((e: Error) => expect(e).to.be.instanceOf(ops.BundlesFailedError));
      expect(received, "changing words are not new events").to.deep.equal([]);
    } finally {
      delete process.env.PF_SINKS_SLACK;
      delete process.env.PF_SINKS_TEAMS;
      await new Promise((ok) => {
        server.closeAllConnections();
        server.close(ok);
      });
    }
  });
});
