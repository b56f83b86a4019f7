#!/usr/bin/env node
// tools/workspace/go.work builds fleet-render and fleet-provider as one module graph, so the Kubernetes,
// gRPC and OpenAPI packages both import compile once into the Go build cache (a cold start builds both).
// fleet-render's versions are Fleet's own (its go.mod follows rancher/fleet's), so the workspace pins
// every module fleet-render compiles to fleet-render's version; the provider runs on them too, where its
// own go.mod asks for newer ones (docs/contributing.md lists what that means). The file sits in a folder
// of its own, not in tools/, so a `go` command run by hand in another tool's folder does not find it.
//
//   node scripts/go-workspace.js          rewrite tools/workspace/go.work (and go.work.sum) from the go.mod files
//   node scripts/go-workspace.js --check  fail if the committed go.work is not what the go.mod files give
//                                         (naming the pins that differ), or if fleet-render would compile
//                                         anything but its own go.mod's versions in it (npm test); writes
//                                         nothing under tools/
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const tools = path.resolve(__dirname, "../tools");
const workDir = path.join(tools, "workspace");
const RENDER = "fleet-render";
const PROVIDER = "fleet-provider";
// Modules where the provider's newer version stays (fleet-render then builds with it too), with why; it
// is outside what fleet-render renders with.
const PROVIDER_WINS = {
  "github.com/mattn/go-runewidth":
    "Pulumi's SDK (charmbracelet/x/ansi) needs v0.0.20's API; fleet-render uses it only in helm's table printer (gosuri/uitable)",
};
// Modules the provider's winners bring into fleet-render's build that Fleet's graph lacks.
const BROUGHT_BY_WINNERS = { "github.com/clipperhouse/uax29/v2": "github.com/mattn/go-runewidth v0.0.20 imports it" };

/** module path -> { version (required), used (after replace) } of what a module's packages and tests compile. */
function compiled(dir, goWork, writeSums = false) {
  const format = "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Path}} {{.Version}}{{end}}{{end}}";
  return modules(dir, goWork, writeSums, ["list", "-deps", "-test", "-f", format, "./..."]);
}

/** The same for every module in a module's graph (what it could raise in a workspace). */
function graph(dir) {
  return modules(dir, "off", false, ["list", "-m", "-f", "{{.Path}} {{.Version}}{{with .Replace}} {{.Path}} {{.Version}}{{end}}", "all"]);
}

/** In a workspace with writeSums, go may add to that workspace's go.work.sum; otherwise nothing is written. */
function modules(dir, goWork, writeSums, args) {
  const out = execFileSync("go", args, {
    cwd: path.join(tools, dir),
    env: {
      ...process.env,
      GOTOOLCHAIN: "local",
      CGO_ENABLED: "0",
      GOFLAGS: [process.env.GOFLAGS, writeSums ? "" : "-mod=readonly"].filter(Boolean).join(" "),
      GOWORK: goWork,
    },
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  const found = new Map();
  for (const line of out.split("\n")) {
    const [mod, version, replacePath, replaceVersion] = line.split(" ");
    if (!version) continue; // the main module itself
    if (replacePath && !replaceVersion)
      // A directory replace cannot be pinned by version: a workspace pin would silently override it.
      throw new Error(
        `go workspace: ${dir} replaces ${mod} with the directory ${replacePath}; pin it in tools/workspace/go.work by hand and teach this script`,
      );
    found.set(mod, { version, used: replaceVersion ? `${replacePath} ${replaceVersion}` : `${mod} ${version}` });
  }
  return found;
}

/** The replace lines: every module fleet-render compiles that the provider's graph holds at another
 * version (the workspace would raise it), at fleet-render's version, unless the provider's wins. */
function replaces(render, provider, drifted = []) {
  const pinned = [...render.keys()].filter((mod) => provider.has(mod) && render.get(mod).used !== provider.get(mod).used);
  return [...new Set([...pinned, ...drifted])]
    .filter((mod) => !(mod in PROVIDER_WINS))
    .sort()
    .map((mod) => `\t${mod} => ${render.get(mod).used}`);
}

/** Modules fleet-render compiles at another version in the workspace than alone: raised through a module
 * the provider's graph raises (its go.mod asks for more than fleet-render's graph holds). */
function drift(render, wsRender) {
  return [...wsRender].filter(([mod, r]) => render.has(mod) && render.get(mod).used !== r.used && !(mod in PROVIDER_WINS)).map(([mod]) => mod);
}

/** The file; `useFrom`: the tools' folder as the workspace names it (relative when committed). */
function workText(lines, useFrom) {
  return [
    "// Written by `node scripts/go-workspace.js` (read it for why); checked by `npm test`. Do not edit by hand.",
    "go 1.26.0",
    "",
    "use (",
    `\t${useFrom}/${PROVIDER}`,
    `\t${useFrom}/${RENDER}`,
    ")",
    "",
    "replace (",
    ...lines,
    ")",
    "",
  ].join("\n");
}

/**
 * The pins that make fleet-render compile exactly its own versions, found in a scratch workspace: the
 * provider's differences, then what they raise further, until nothing moves (a few rounds at most).
 * The scratch folder ends with the go.work and go.work.sum found.
 */
function generate(render, scratch) {
  const provider = graph(PROVIDER);
  const goWork = path.join(scratch, "go.work");
  let drifted = [];
  for (let round = 0; ; round++) {
    fs.writeFileSync(goWork, workText(replaces(render, provider, drifted), tools));
    const more = drift(render, compiled(RENDER, goWork, true));
    if (!more.length) break;
    if (round === 5) throw new Error(`go workspace: fleet-render's versions still move after ${round} rounds: ${more.join(", ")}`);
    drifted = [...drifted, ...more];
  }
  compiled(PROVIDER, goWork, true); // the workspace's own checksums: what neither go.sum holds
  return replaces(render, provider, drifted);
}

/** With the committed tools/workspace/go.work: fleet-render compiles its own go.mod's versions (but the listed winners). */
function check(render) {
  const problems = [];
  for (const [mod, r] of compiled(RENDER, path.join(workDir, "go.work"))) {
    if (mod in PROVIDER_WINS || mod in BROUGHT_BY_WINNERS) continue;
    const own = render.get(mod);
    if (!own) problems.push(`${mod}: in fleet-render's build only through the workspace (not in Fleet's graph)`);
    else if (own.used !== r.used) problems.push(`${mod}: fleet-render's go.mod gives ${own.used}, the workspace ${r.used}`);
  }
  return problems;
}

const pinsOf = (text) => text.split("\n").filter((l) => l.includes(" => "));
const render = compiled(RENDER, "off");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pf-go-work-"));
try {
  const sums = path.join(workDir, "go.work.sum");
  if (fs.existsSync(sums)) fs.copyFileSync(sums, path.join(scratch, "go.work.sum"));
  const lines = generate(render, scratch);
  if (process.argv.includes("--check")) {
    const committed = pinsOf(fs.readFileSync(path.join(workDir, "go.work"), "utf8"));
    const stale = [
      ...lines.filter((l) => !committed.includes(l)).map((l) => `missing ${l.trim()}`),
      ...committed.filter((l) => !lines.includes(l)).map((l) => `stale ${l.trim()}`),
    ];
    const problems = stale.length
      ? [`tools/workspace/go.work is not what the go.mod files give (run node scripts/go-workspace.js): ${stale.join("; ")}`]
      : check(render);
    for (const p of problems) console.error(`go workspace: ${p}`);
    process.exitCode = problems.length ? 1 : 0;
  } else {
    fs.mkdirSync(workDir, { recursive: true });
    fs.writeFileSync(path.join(workDir, "go.work"), workText(lines, ".."));
    fs.copyFileSync(path.join(scratch, "go.work.sum"), path.join(workDir, "go.work.sum"));
    console.log(`tools/workspace/go.work: ${lines.length} modules pinned to fleet-render's versions`);
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
