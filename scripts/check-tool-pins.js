#!/usr/bin/env node
// The engine built from tools/ must be exactly the versions the program's SDKs were written for:
// @pulumi/pulumi = the CLI (pkg/v3 in tools/pulumi/go.mod), @pulumi/kubernetes = the provider plugin
// (plugin-version and provider-release in tools/kubernetes/go.mod). Exits non-zero naming the mismatch.
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8"));
const npmVersion = (name) => lock.packages[`node_modules/${name}`]?.version;
const cliMod = fs.readFileSync(path.join(root, "tools/pulumi/go.mod"), "utf8");
const k8sMod = fs.readFileSync(path.join(root, "tools/kubernetes/go.mod"), "utf8");
const cli = /^\s*(?:require\s+)?github\.com\/pulumi\/pulumi\/pkg\/v3 v(\d\S*)/m.exec(cliMod)?.[1];
const meta = (key) => new RegExp(`^//\\s*${key}:\\s*(\\S+)`, "m").exec(k8sMod)?.[1];

const checks = [
  ["@pulumi/pulumi (package-lock.json)", npmVersion("@pulumi/pulumi"), "github.com/pulumi/pulumi/pkg/v3 (tools/pulumi/go.mod)", cli],
  ["@pulumi/kubernetes (package-lock.json)", npmVersion("@pulumi/kubernetes"), "plugin-version (tools/kubernetes/go.mod)", meta("plugin-version")],
  ["@pulumi/kubernetes (package-lock.json)", npmVersion("@pulumi/kubernetes"), "provider-release (tools/kubernetes/go.mod)", meta("provider-release")],
];
const bad = checks.filter(([, a, , b]) => !a || !b || a !== b);
for (const [an, a, bn, b] of bad) console.error(`tool pins disagree: ${an} is ${a ?? "missing"}, ${bn} is ${b ?? "missing"}`);
process.exit(bad.length ? 1 : 0);
