import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveSource } from "../../core/source/git";
import { protocolsFor } from "../../core/source/git-env";
import { FleetError } from "../../core/base/errors";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { rejectionWith } from "../support/rejection";
import { withEnv } from "../support/env";

/** The FleetError resolving a source is rejected with. */
const rejection = (p: Promise<unknown>) => rejectionWith(p, FleetError);

describe("git source (real repositories)", () => {
  let cache: string;
  beforeEach(() => {
    cache = tempDir("pf-cache-");
  });

  it("checks out exactly the branch head into the cache, outside the repository", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a") });
    const src = await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
    expect(src.commit).to.equal(repo.head());
    expect(src.dir.startsWith(cache)).to.equal(true);
    expect(fs.readFileSync(path.join(src.dir, "a/cm.yaml"), "utf8")).to.contain("name: a");
    expect(src.fetched).to.equal(true);
  });

  it("a commit whose files expand past PULUMI_FLEET_MAX_TREE_MIB is refused before anything is written", async () => {
    // 3 MiB of zeros compresses to a few KiB in the push.
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a"), "big/zeros.yaml": "0".repeat(3 * 1024 * 1024) });
    process.env.PULUMI_FLEET_MAX_TREE_MIB = "2";
    try {
      const err = await rejection(resolveSource(gitRepoConfig({ name: "bomb", repo: repo.url() }), cache));
      expect(err.message).to.match(
        /gitRepo bomb: .*add up to 4 MiB, over the limit of 2 MiB per checkout \(PULUMI_FLEET_MAX_TREE_MIB; the largest is "big\/zeros\.yaml", 3 MiB\)/,
      );
      expect(
        fs.existsSync(path.join(cache, "git")) ? fs.readdirSync(path.join(cache, "git"), { recursive: true }).filter((f) => String(f).includes("trees/")) : [],
      ).to.deep.equal([]);
    } finally {
      delete process.env.PULUMI_FLEET_MAX_TREE_MIB;
    }
    process.env.PULUMI_FLEET_MAX_ENTRIES = "1";
    try {
      const err = await rejection(resolveSource(gitRepoConfig({ name: "many", repo: repo.url() }), cache));
      expect(err.message).to.match(/gitRepo many: commit \w+ has 2 files, over the limit of 1 \(PULUMI_FLEET_MAX_ENTRIES\): nothing was written/);
    } finally {
      delete process.env.PULUMI_FLEET_MAX_ENTRIES;
    }
  });

  describe("no program or credential of the runner's git runs for a checkout", () => {
    // Every shape of runner configuration that names a program, each leaving a canary file if it runs;
    // the commit's .gitattributes chooses the drivers, as a hostile push would.
    const ATTRIBUTES = "a.yaml filter=evil diff=evil\nb.yaml filter=evilproc\nc.yaml filter=included\n";
    const FILES = { ".gitattributes": ATTRIBUTES, "a.yaml": CONFIGMAP("a"), "b.yaml": CONFIGMAP("b"), "c.yaml": CONFIGMAP("c"), "d.yaml": CONFIGMAP("d") };
    let runner: string;
    let canaries: string;
    let saved: NodeJS.ProcessEnv;
    beforeEach(() => {
      runner = tempDir("pf-runner-");
      canaries = path.join(runner, "canaries");
      fs.mkdirSync(canaries);
      saved = { ...process.env };
    });
    afterEach(() => {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    /** An executable that leaves ran-<name> and then does what `then` says (pass data through, run its arguments). */
    const program = (name: string, then = "exit 0") => {
      const file = path.join(runner, `${name}.sh`);
      fs.writeFileSync(file, `#!/bin/sh\ntouch ${canaries}/ran-${name}\n${then}\n`, { mode: 0o755 });
      return file;
    };
    const hostileSettings = (): [string, string][] => {
      const hooks = path.join(runner, "hooks");
      fs.mkdirSync(hooks, { recursive: true });
      for (const hook of ["reference-transaction", "post-checkout", "post-index-change", "pre-auto-gc", "post-merge"]) {
        fs.copyFileSync(program(`hook-${hook}`), path.join(hooks, hook));
        fs.chmodSync(path.join(hooks, hook), 0o755);
      }
      const included = path.join(runner, "included.gitconfig");
      fs.writeFileSync(included, `[filter "included"]\n\tsmudge = ${program("included-smudge", "cat")}\n\trequired = true\n`);
      const attributes = path.join(runner, "attributes");
      fs.writeFileSync(attributes, "d.yaml filter=evil\n");
      return [
        ["filter.evil.smudge", program("smudge", "cat")],
        ["filter.evil.clean", program("clean", "cat")],
        ["filter.evil.required", "true"],
        ["filter.evilproc.process", program("process")],
        ["filter.evilproc.required", "true"],
        ["diff.evil.textconv", program("textconv", 'cat "$1"')],
        ["diff.external", program("external-diff")],
        ["core.attributesFile", attributes],
        ["core.fsmonitor", program("fsmonitor", "exit 1")],
        ["core.hooksPath", hooks],
        ["core.sshCommand", program("ssh-command")],
        ["core.pager", program("pager", "cat")],
        ["core.editor", program("editor")],
        ["sequence.editor", program("sequence-editor")],
        ["credential.helper", `!${program("credential-helper")}`],
        ["uploadpack.packObjectsHook", program("pack-objects-hook", 'exec "$@"')],
        ["include.path", included],
      ];
    };
    const asGitConfig = (settings: [string, string][]) =>
      settings
        .map(([k, v]) => {
          const i = k.lastIndexOf(".");
          const [section, sub] = [k.slice(0, k.indexOf(".")), k.slice(k.indexOf(".") + 1, i)];
          return `[${section}${sub ? ` "${sub}"` : ""}]\n\t${k.slice(i + 1)} = ${JSON.stringify(v)}\n`;
        })
        .join("");
    const expectUntouched = async (repo: TestRepo) => {
      const src = await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
      expect(fs.readdirSync(canaries), "runner programs that ran").to.deep.equal([]);
      for (const [name, content] of Object.entries(FILES)) expect(fs.readFileSync(path.join(src.dir, name), "utf8"), name).to.equal(content);
    };

    const placements: [string, (settings: [string, string][]) => void][] = [
      [
        "~/.gitconfig",
        (s) => {
          fs.writeFileSync(path.join(runner, ".gitconfig"), asGitConfig(s));
          process.env.HOME = runner;
        },
      ],
      [
        "$XDG_CONFIG_HOME/git/config",
        (s) => {
          fs.mkdirSync(path.join(runner, "xdg", "git"), { recursive: true });
          fs.writeFileSync(path.join(runner, "xdg", "git", "config"), asGitConfig(s));
          process.env.XDG_CONFIG_HOME = path.join(runner, "xdg");
        },
      ],
      [
        "GIT_CONFIG_GLOBAL",
        (s) => {
          fs.writeFileSync(path.join(runner, "global"), asGitConfig(s));
          process.env.GIT_CONFIG_GLOBAL = path.join(runner, "global");
        },
      ],
      [
        "GIT_CONFIG_SYSTEM",
        (s) => {
          fs.writeFileSync(path.join(runner, "system"), asGitConfig(s));
          process.env.GIT_CONFIG_SYSTEM = path.join(runner, "system");
          delete process.env.GIT_CONFIG_NOSYSTEM;
        },
      ],
      [
        "GIT_CONFIG_COUNT",
        (s) => {
          process.env.GIT_CONFIG_COUNT = String(s.length);
          s.forEach(([k, v], i) => {
            process.env[`GIT_CONFIG_KEY_${i}`] = k;
            process.env[`GIT_CONFIG_VALUE_${i}`] = v;
          });
        },
      ],
      [
        "GIT_CONFIG_PARAMETERS (git -c)",
        (s) => {
          process.env.GIT_CONFIG_PARAMETERS = s.map(([k, v]) => `'${k}=${v}'`).join(" ");
        },
      ],
    ];
    for (const [where, place] of placements) {
      it(`none from ${where}: filters, textconv, fsmonitor, hooks, packObjectsHook, includes, attributesFile`, async () => {
        const repo = new TestRepo(FILES);
        place(hostileSettings());
        await expectUntouched(repo);
      });
    }

    it("no url.<x>.insteadOf of the runner's sends the fetch elsewhere (here to an ext:: command it allows)", async () => {
      const repo = new TestRepo(FILES);
      fs.writeFileSync(
        path.join(runner, "global"),
        `[url "ext::${program("ext-transport")}"]\n\tinsteadOf = ${repo.url()}\n[protocol "ext"]\n\tallow = always\n`,
      );
      process.env.GIT_CONFIG_GLOBAL = path.join(runner, "global");
      await expectUntouched(repo);
    });

    it("a commit's .gitattributes changes no byte: no end-of-line conversion, keyword expansion or re-encoding", async () => {
      const files = { "crlf.yaml": "a: 1\nb: $Id$\n", "x.u": "hi\n" };
      const repo = new TestRepo(files);
      // Added alone, after the files (git would re-encode them on the way in otherwise).
      fs.writeFileSync(path.join(repo.dir, ".gitattributes"), "*.yaml text eol=crlf ident\n*.u working-tree-encoding=UTF-16\n");
      repo.git("add", ".gitattributes");
      repo.git("commit", "-q", "-m", "attributes");
      const src = await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
      for (const [name, content] of Object.entries(files)) expect(fs.readFileSync(path.join(src.dir, name), "utf8"), name).to.equal(content);
    });

    it("an ssh URL without the stack's key is refused (the runner's keys, agent and known_hosts are not used)", async () => {
      const err = await rejection(resolveSource(gitRepoConfig({ name: "ssh", repo: "git@example.com:org/repo.git" }), cache));
      expect(err.message).to.contain("gitRepo ssh").and.contain("needs auth.sshPrivateKey and auth.knownHosts");
    });

    it("only the protocols the operator's URL needs are allowed; a remote-helper URL none", () => {
      expect(protocolsFor("https://example.com/r.git")).to.deep.equal(["https"]);
      expect(protocolsFor("http://example.com/r.git")).to.deep.equal(["http", "https"]);
      expect(protocolsFor("ssh://git@example.com/r.git")).to.deep.equal(["ssh"]);
      expect(protocolsFor("git@example.com:org/r.git")).to.deep.equal(["ssh"]);
      expect(protocolsFor("file:///srv/r.git")).to.deep.equal(["file"]);
      expect(protocolsFor("/srv/r.git")).to.deep.equal(["file"]);
      expect(protocolsFor("ext::sh -c evil")).to.deep.equal([]);
      expect(protocolsFor("fd::3")).to.deep.equal([]);
      expect(protocolsFor("relative/r.git")).to.deep.equal([]);
    });
  });

  it("fetches nothing when the remote ref has not moved, and follows a branch that moved", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const cfg = gitRepoConfig({ repo: repo.url() });
    await resolveSource(cfg, cache);
    const warm = await resolveSource(cfg, cache);
    expect(warm.fetched).to.equal(false);
    const moved = repo.commit({ "cm.yaml": CONFIGMAP("b") });
    const after = await resolveSource(cfg, cache);
    expect(after.commit).to.equal(moved);
    expect(after.fetched).to.equal(true);
    expect(fs.readFileSync(path.join(after.dir, "cm.yaml"), "utf8")).to.contain("name: b");
  });

  it("resolves tags, full and abbreviated commits, and named branches", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("v1") });
    const first = repo.head();
    repo.git("tag", "-a", "v1.0.0", "-m", "release");
    repo.git("checkout", "-q", "-b", "feature");
    const feature = repo.commit({ "cm.yaml": CONFIGMAP("feature") });
    repo.git("checkout", "-q", "master");
    repo.commit({ "cm.yaml": CONFIGMAP("v2") });
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), revision: "v1.0.0" }), cache)).commit).to.equal(first);
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), revision: first }), cache)).commit).to.equal(first);
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), revision: feature.slice(0, 10) }), tempDir())).commit).to.equal(feature);
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), branch: "feature" }), cache)).commit).to.equal(feature);
  });

  it("a full commit already in the cache needs no network", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const sha = repo.head();
    await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
    fs.rmSync(repo.dir, { recursive: true, force: true });
    const src = await resolveSource(gitRepoConfig({ repo: repo.url(), revision: sha }), cache);
    expect(src.fetched).to.equal(false);
  });

  it("names the GitRepo and the reason for an unknown branch, revision or unreachable remote", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const branch = await rejection(resolveSource(gitRepoConfig({ name: "apps", repo: repo.url(), branch: "nope" }), cache));
    expect(branch.message).to.contain("gitRepo apps").and.contain('branch "nope" not found');
    const rev = await rejection(resolveSource(gitRepoConfig({ name: "apps", repo: repo.url(), revision: "v9" }), cache));
    expect(rev.message).to.contain('revision "v9" is not a tag, branch or commit');
    const gone = await rejection(resolveSource(gitRepoConfig({ name: "apps", repo: "file:///nonexistent/repo.git" }), cache));
    expect(gone.message)
      .to.contain("gitRepo apps")
      .and.match(/does not appear to be a git repository|not found|No such/);
  });

  it("never shows a token in errors", async () => {
    const err = await rejection(
      resolveSource(
        gitRepoConfig({
          name: "private",
          repo: "http://127.0.0.1:9/private.git",
          auth: { username: "bot", token: "s3cr3t-token-value" },
        }),
        cache,
      ),
    );
    expect(err.message).to.contain("gitRepo private");
    expect(err.message).not.to.contain("s3cr3t-token-value");
  });

  it("two resolutions at once share one cache without corrupting it", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const cfg = gitRepoConfig({ repo: repo.url() });
    const results = await Promise.all([1, 2, 3, 4].map(() => resolveSource(cfg, cache)));
    for (const r of results) {
      expect(r.commit).to.equal(repo.head());
      expect(fs.readFileSync(path.join(r.dir, "cm.yaml"), "utf8")).to.contain("name: a");
    }
    expect(fs.existsSync(path.join(path.dirname(path.dirname(results[0].dir)), "lock"))).to.equal(false);
  });

  it("removes the SSH key file after use, whatever the outcome", async () => {
    // A temporary directory of its own: another run on the machine (CI beside a working copy) writes key files to the shared one.
    const tmp = tempDir("pf-auth-tmp-");
    await withEnv({ TMPDIR: tmp }, () =>
      rejection(
        resolveSource(
          gitRepoConfig({
            repo: "ssh://git@127.0.0.1:9/repo.git",
            auth: { sshPrivateKey: "-----BEGIN KEY-----\nx\n-----END KEY-----", knownHosts: "127.0.0.1 ssh-ed25519 AAAA" },
          }),
          cache,
        ),
      ),
    );
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith("pulumi-fleet-auth-"))).to.deep.equal([]);
  });

  it("reads a plain directory in place, with a content hash as its revision", async () => {
    const dir = tempDir("pf-plain-");
    fs.writeFileSync(path.join(dir, "cm.yaml"), CONFIGMAP("a"));
    const cfg = gitRepoConfig({ repo: dir });
    const a = await resolveSource(cfg, cache);
    expect(a.dir).to.equal(dir);
    expect((await resolveSource(cfg, cache)).commit).to.equal(a.commit);
    fs.writeFileSync(path.join(dir, "cm.yaml"), CONFIGMAP("b"));
    expect((await resolveSource(cfg, cache)).commit).not.to.equal(a.commit);
  });
});
