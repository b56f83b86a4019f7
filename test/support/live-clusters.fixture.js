// Mocha loads --require files through import() and possibly before .mocharc.json's ts-node hook;
// this CommonJS shim registers ts-node itself, then loads the fixture in live-clusters.ts.
require("ts-node/register/transpile-only");
module.exports = require("./live-clusters.ts");
