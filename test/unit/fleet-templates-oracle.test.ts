/**
 * Helm values templating is Fleet's: every case of fleet-templates.cases.json, with the result Fleet's
 * own preprocessHelmValues gave for it (rancher/fleet 3b2c622, run locally; see the file's "about"),
 * run through templateHelmValues in one batch and compared.
 *
 * - Values: deep-equal after one normalization: no values (absent, or Fleet's nil map) equals `{}`;
 *   both mean no values to Helm, and Fleet itself turns absent values into `{}` before templating.
 * - Errors: an error where Fleet has one, none where it has none. Our message must contain Fleet's
 *   whole error text (`failed to render helm values template: template: values:1:6: executing ...`),
 *   after removing the oracle's `PANIC: ` marker for a Fleet panic (the controller's reconcile fails).
 *   Ours adds where (gitRepo, bundle, cluster, field) and moves templateValues' key into the field.
 * - Refused here (`refusedHere`): functions whose result changes from run to run (now, rand*,
 *   uuidv4, gen* ...), and sprig's date functions given something that makes them format the current
 *   time. Fleet gives a different value on every run; we refuse, deliberately (each `pulumi up` would
 *   redeploy), and assert the refusal names the function.
 *
 * These cases replace the former hand-written test/unit/fleet-templates.test.ts: its 53 cases are the
 * family "hand-written" here, on the same cluster, and Fleet agreed with every one of them.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { templateHelmValues, templateHelmValuesEach, ValuesJob } from "../../core/targeting/values";
import { FleetError } from "../../core/base/errors";
import { ClusterConfig } from "../../core/config/stack";
import { HelmOptions } from "../../core/bundles/types";
import { rejectionOf } from "../support/rejection";

interface OracleCase {
  id: string;
  family: string;
  cluster: string;
  values?: Record<string, unknown> | null;
  templateValues?: Record<string, string>;
  disablePreProcess?: boolean;
  refusedHere?: string;
  fleet: { values?: Record<string, unknown> | null; error: string };
}

interface OracleData {
  clusters: Record<string, Omit<ClusterConfig, "deleteUnreachable">>;
  cases: OracleCase[];
}

const data = JSON.parse(fs.readFileSync(path.join(__dirname, "fleet-templates.cases.json"), "utf8")) as OracleData;
const clusters: Record<string, ClusterConfig> = Object.fromEntries(Object.entries(data.clusters).map(([k, c]) => [k, { ...c, deleteUnreachable: false }]));

function jobOf(c: OracleCase): ValuesJob {
  const helm: HelmOptions = {};
  if (c.values != null) helm.values = c.values;
  if (c.templateValues) helm.templateValues = c.templateValues;
  if (c.disablePreProcess) helm.disablePreProcess = true;
  return { helm, cluster: clusters[c.cluster], ctx: { gitRepo: "oracle", bundle: c.id } };
}

/** Fleet's essential error text: the oracle marks a recovered panic with "PANIC: ". */
function fleetErrorText(error: string): string {
  return error.replace(/^PANIC: /, "");
}

const noValues = (v: unknown) => (v == null ? {} : v);

/** Why a result differs from Fleet's, or undefined when it does not. */
function mismatch(c: OracleCase, got: HelmOptions | FleetError): string | undefined {
  const show = (v: unknown) => JSON.stringify(v);
  if (c.refusedHere) {
    const refusal = `function "${c.refusedHere}" is not deterministic`;
    if (!(got instanceof FleetError)) return `should be refused (${refusal}), got values ${show(got.values)}`;
    return got.message.includes(refusal) ? undefined : `should be refused (${refusal}), got: ${got.message}`;
  }
  if (c.fleet.error) {
    const want = fleetErrorText(c.fleet.error);
    if (!(got instanceof FleetError)) return `Fleet fails (${want}), got values ${show(got.values)}`;
    return got.message.includes(want) ? undefined : `error differs:\n      Fleet: ${want}\n      ours:  ${got.message}`;
  }
  if (got instanceof FleetError) return `Fleet gives ${show(c.fleet.values)}, got error: ${got.message}`;
  try {
    expect(noValues(got.values)).to.deep.equal(noValues(c.fleet.values));
    return undefined;
  } catch {
    return `values differ:\n      Fleet: ${show(c.fleet.values)}\n      ours:  ${show(got.values)}`;
  }
}

describe("helm values templating matches Fleet's preprocessHelmValues (oracle cases)", function () {
  const jobs = data.cases.map(jobOf);
  const inputs = JSON.stringify(jobs.map((j) => j.helm));
  let results: (HelmOptions | FleetError)[];

  before(async function () {
    this.timeout(300_000); // a cold build of fleet-render on first use
    results = await templateHelmValuesEach(jobs); // every case in one batch, as the plan sends them
  });

  it("has the cases and one result per case, and leaves the helm options it was given untouched", () => {
    expect(data.cases.length).to.be.greaterThan(300);
    expect(new Set(data.cases.map((c) => c.id)).size).to.equal(data.cases.length);
    expect(results).to.have.length(data.cases.length);
    expect(JSON.stringify(jobs.map((j) => j.helm))).to.equal(inputs);
  });

  const families = [...new Set(data.cases.map((c) => c.family))];
  for (const family of families) {
    const cases = data.cases.map((c, i) => ({ c, i })).filter(({ c }) => c.family === family);
    it(`${family}: ${cases.length} cases`, () => {
      const failures = cases.flatMap(({ c, i }) => {
        const why = mismatch(c, results[i]);
        const input = { values: c.values, templateValues: c.templateValues, disablePreProcess: c.disablePreProcess, cluster: c.cluster };
        return why ? [`${c.id} ${JSON.stringify(input)}\n    ${why}`] : [];
      });
      expect(failures, `${failures.length} of ${cases.length} differ from Fleet:\n  ${failures.join("\n  ")}\n`).to.deep.equal([]);
    });
  }

  it("templateHelmValues throws the first failing job, with templateValues' key as the field", async () => {
    const byId = (id: string) => data.cases.find((c) => c.id === id)!;
    const ok = byId("labels-001"),
      valuesError = byId("compare-048"),
      tvError = byId("template-values-005");
    expect(await rejectionOf(templateHelmValues([ok, tvError, valuesError].map(jobOf)), FleetError)).to.contain(
      `gitRepo oracle, bundle template-values-005, cluster eu-west-1: helm.templateValues.a: ${tvError.fleet.error}`,
    );
    expect(await rejectionOf(templateHelmValues([ok, valuesError, tvError].map(jobOf)), FleetError)).to.contain(
      `cluster eu-west-1: helm.values: ${valuesError.fleet.error}`,
    );
    expect((await templateHelmValues([ok].map(jobOf)))[0].values).to.deep.equal(ok.fleet.values);
  });
});
