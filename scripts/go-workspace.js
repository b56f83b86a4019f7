#!/usr/bin/env node
// tools/go.work builds fleet-render and fleet-provider as one module graph, so the Kubernetes, gRPC and
// OpenAPI packages both import compile once into the Go build cache (a cold start builds both).
// fleet-render's versions are Fleet's own (its go.mod follows rancher/fleet's), so the workspace pins
// every module both compile to fleet-render's version; the provider runs on them too.
//
//   node scripts/go-workspace.js          rewrite tools/go.work from the two go.mod files
//   node scripts/go-workspace.js --check  fail, naming the module, if tools/go.work is not what the
//                                         go.mod files give, if a module both compile is at two
//                                         versions, or if fleet-render's versions moved (npm test)
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const tools = path.resolve(__dirname, "../tools");
const workFile = path.join(tools, "go.work");
const RENDER = "fleet-render";
const PROVIDER = "fleet-provider";
// Modules where the provider's newer version stays (fleet-render then builds with it too), each with why.
// Both are outside what fleet-render renders with.
const PROVIDER_WINS = {
  "github.com/mattn/go-runewidth":
    "Pulumi's SDK (charmbracelet/x/ansi) needs v0.0.20's API; fleet-render uses it only in helm's table printer (gosuri/uitable)",
};
// Modules the provider's winners bring into fleet-render's build that Fleet's graph lacks.
const BROUGHT_BY_WINNERS = { "github.com/clipperhouse/uax29/v2": "github.com/mattn/go-runewidth v0.0.20 imports it" };

/** module path -> { version (required), used (after replace) } of what a module's packages and tests
 * compile; in the workspace with writeSums, go may add to go.work.sum. */
function compiled(dir, workspace, writeSums = false) {
  const format = "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Path}} {{.Version}}{{end}}{{end}}";
  return modules(dir, workspace, writeSums, ["list", "-deps", "-test", "-f", format, "./..."]);
}

/** The same for every module in a module's graph (what it could raise in a workspace). */
function graph(dir) {
  return modules(dir, false, false, ["list", "-m", "-f", "{{.Path}} {{.Version}}{{with .Replace}} {{.Path}} {{.Version}}{{end}}", "all"]);
}

function modules(dir, workspace, writeSums, args) {
  const out = execFileSync("go", args, {
    cwd: path.join(tools, dir),
    env: { ...process.env, GOTOOLCHAIN: "local", CGO_ENABLED: "0", GOFLAGS: writeSums ? "" : "-mod=readonly", GOWORK: workspace ? workFile : "off" },
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  const modules = new Map();
  for (const line of out.split("\n")) {
    const [mod, version, replacePath, replaceVersion] = line.split(" ");
    if (!version) continue; // the main module itself
    modules.set(mod, { version, used: replaceVersion ? `${replacePath} ${replaceVersion}` : `${mod} ${version}` });
  }
  return modules;
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

function workText(lines) {
  return [
    "// Written by `node scripts/go-workspace.js` (read it for why); checked by `npm test`. Do not edit by hand.",
    "go 1.26.0",
    "",
    "use (",
    `\t./${PROVIDER}`,
    `\t./${RENDER}`,
    ")",
    "",
    "replace (",
    ...lines,
    ")",
    "",
  ].join("\n");
}

/** With tools/go.work as written: both tools compile each shared module at one version, and
 * fleet-render compiles its own go.mod's versions (but the listed winners). */
function check(render) {
  const problems = [];
  const wsRender = compiled(RENDER, true);
  const wsProvider = compiled(PROVIDER, true);
  for (const [mod, r] of wsRender) {
    const p = wsProvider.get(mod);
    if (p && (p.version !== r.version || p.used !== r.used))
      problems.push(`${mod}: fleet-render compiles ${r.used} (${r.version}), fleet-provider ${p.used} (${p.version})`);
    if (mod in PROVIDER_WINS || mod in BROUGHT_BY_WINNERS) continue;
    const own = render.get(mod);
    if (!own) problems.push(`${mod}: in fleet-render's build only through the workspace (not in Fleet's graph)`);
    else if (own.used !== r.used) problems.push(`${mod}: fleet-render's go.mod gives ${own.used}, the workspace ${r.used}`);
  }
  return problems;
}

const render = compiled(RENDER, false);
const provider = graph(PROVIDER);
const sumFile = `${workFile}.sum`;
const read = (f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "");
const committed = read(workFile);
const committedSums = read(sumFile);
// The pins that make fleet-render compile exactly its own versions: the provider's differences, then what
// they raise further, until nothing moves (a few rounds at most).
let drifted = [];
for (let round = 0; ; round++) {
  fs.writeFileSync(workFile, workText(replaces(render, provider, drifted)));
  const more = drift(render, compiled(RENDER, true, true));
  if (!more.length) break;
  if (round === 5) throw new Error(`go workspace: fleet-render's versions still move after ${round} rounds: ${more.join(", ")}`);
  drifted = [...drifted, ...more];
}
compiled(PROVIDER, true, true); // the workspace's own checksums (go.work.sum): what neither go.sum holds
if (process.argv.includes("--check")) {
  const now = read(workFile);
  // --check leaves the files as they were; go reads the committed ones below.
  fs.writeFileSync(workFile, committed);
  fs.writeFileSync(sumFile, committedSums);
  const problems = committed === now ? check(render) : ["tools/go.work is not what the go.mod files give: run node scripts/go-workspace.js"];
  for (const p of problems) console.error(`go workspace: ${p}`);
  process.exit(problems.length ? 1 : 0);
}
console.log(`tools/go.work: ${replaces(render, provider, drifted).length} modules pinned to fleet-render's versions`);
