/**
 * The lists the docs state, compared with the code's own lists, so a change that makes a doc false fails
 * `npm test` (issue 54: six of ten sampled claims were false; links and figures were all docs.test.ts checked).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { HONOURED_DIFFERENTLY, NOT_HONOURED } from "../../core/bundles/fleetyaml";
import { keysOf, FieldTable } from "../../core/config/field-table";
import * as stack from "../../core/config/stack-fields";

const doc = (name: string) => fs.readFileSync(path.join(PROJECT_DIR, "docs", name), "utf8");

/** The table row of docs/configuration.md whose first cell is `key` (or starts with it). */
function configRow(text: string, key: string): string | undefined {
  return text.split("\n").find((l) => l.startsWith(`| \`${key}\``) || l.startsWith(`| \`${key}[]\``));
}

describe("docs state what the code does (lists compared with the code's own)", () => {
  it("the configuration reference has a row for every stack-file key, naming every field of each section", () => {
    const text = doc("configuration.md");
    const missingRows = keysOf(stack.STACK_FIELDS).filter((k) => !configRow(text, k));
    expect(missingRows, "stack-file keys with no row in docs/configuration.md").to.deep.equal([]);
    const sections: Record<string, FieldTable> = {
      notifications: stack.NOTIFICATIONS_FIELDS,
      metrics: stack.METRICS_FIELDS,
      "clusters[]": stack.CLUSTER_FIELDS,
      "clusterGroups[]": stack.CLUSTER_GROUP_FIELDS,
      "gitRepos[]": stack.GIT_REPO_FIELDS,
      "helmOps[]": stack.HELM_OP_FIELDS,
      "schedules[]": stack.SCHEDULE_FIELDS,
      "shards[]": stack.SHARD_FIELDS,
      "healthChecks[]": stack.HEALTH_CHECK_FIELDS,
      agent: stack.AGENT_FIELDS,
    };
    const unnamed = Object.entries(sections).flatMap(([key, table]) => {
      const row = configRow(text, key) ?? "";
      return keysOf(table)
        .filter((f) => ![`\`${f}\``, `\`${f}[]\``, `\`${f}.`].some((named) => row.includes(named)))
        .map((f) => `${key}.${f}`);
    });
    expect(unnamed, "fields a reader accepts that docs/configuration.md does not name in the section's row").to.deep.equal([]);
  });

  it("docs/fleet-compatibility.md lists exactly the fleet.yaml settings the reader warns are not honoured, and helm.force as honoured differently", () => {
    const text = doc("fleet-compatibility.md");
    // The reader's keys (core/bundles/fleetyaml.ts NOT_HONOURED) as the fields a user writes.
    const fieldOf: Record<keyof typeof NOT_HONOURED, string> = {
      correctDrift: "correctDrift.force",
      comparePatchOps: "diff.comparePatches[].operations[]",
      ignoreConditions: "targetCustomizations[].ignore.conditions",
      acceptedStates: "dependsOn[].acceptedStates",
      atomic: "helm.atomic",
      waitForJobs: "helm.waitForJobs",
      maxHistory: "helm.maxHistory",
    };
    expect(Object.keys(fieldOf).sort(), "a new NOT_HONOURED entry needs its row").to.deep.equal(Object.keys(NOT_HONOURED).sort());
    const start = text.indexOf("- **Not honoured yet, and said so**");
    const table = text.slice(start, text.indexOf("\n\n", text.indexOf("| field | what happens instead |", start)));
    const rows = table
      .split("\n")
      .filter((l) => /^\s*\| `/.test(l))
      .map((l) => l.trim().split("|")[1].trim());
    for (const field of Object.values(fieldOf)) expect(rows.some((r) => r.includes(`\`${field}\``), `no row for ${field}:\n${table}`)).to.equal(true);
    // rolloutStrategy's fields are warned by core/targeting/rollout.ts; nothing else is listed as not honoured.
    // Values named in a row ("other than `remove`", "other than `[Ready]`") are not fields.
    const known = [...Object.values(fieldOf), "rolloutStrategy.maxUnavailablePartitions", "rolloutStrategy.maxNew", "keepFailHistory", "remove", "[Ready]"];
    const listed = rows.flatMap((r) => [...r.matchAll(/`([^`]+)`/g)].map((m) => m[1]));
    expect(
      listed.filter((f) => !known.includes(f)),
      "listed as not honoured, but the reader does not warn about it",
    ).to.deep.equal([]);
    expect(Object.keys(HONOURED_DIFFERENTLY)).to.deep.equal(["force"]);
    expect(text).to.match(/\| `helm\.force` \| honoured differently, and warned so: an object whose immutable fields changed is \*\*deleted and recreated\*\*/);
  });

  it("the attack suite's count in docs/security.md is the number of attacks in test/e2e/attacks.test.ts", () => {
    const suite = fs.readFileSync(path.join(PROJECT_DIR, "test/e2e/attacks.test.ts"), "utf8");
    const list = /const ATTACKS: Attack\[\] = \[([\s\S]*?)\n\];/.exec(suite)![1];
    const count = (list.match(/^ {2}\{\n {4}name:/gm) ?? []).length;
    const stated = /\*\*The attack suite\*\* \(test\/e2e\/attacks\.test\.ts, in `npm test`\): (\d+) attacks/.exec(doc("security.md"));
    expect(stated, "docs/security.md states the suite's count").to.not.equal(null);
    expect(Number(stated![1])).to.equal(count);
  });
});
