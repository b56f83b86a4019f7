/**
 * `up --refresh` and `preview --refresh` (automation/operation/correct-drift.ts withRefreshContents): the
 * engine refreshes every pair before the program registers any BundleContent, so the state's contents
 * are handed over for that command, and only for it.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import { Stack } from "@pulumi/pulumi/automation";
import { CONTENT_FILE_ENV, newContentFilePath } from "../../automation/engine/content-handover";
import { StateResource } from "../../automation/engine/deployed-objects";
import { withRefreshContents } from "../../automation/operation/correct-drift";
import { Session } from "../../automation/operation/session";

const digest = "d".repeat(64);
const content: StateResource = {
  urn: `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:BundleContent::${digest}`,
  type: "pulumi-fleet:index:BundleContent",
  custom: true,
  inputs: { objects: { "/ConfigMap/app/a": '{"kind":"ConfigMap"}' } },
};

function session(file: string): Pick<Session, "stack" | "state"> {
  const stack = { name: "s", workspace: { envVars: { [CONTENT_FILE_ENV]: file } } } as unknown as Stack;
  return { stack, state: { resources: [content] } as Session["state"] };
}

describe("the contents handed over to an update or preview that refreshes first (correct-drift.ts)", () => {
  it("with --refresh the engine command finds the state's contents in the file its environment names, removed after", async () => {
    const file = newContentFilePath();
    const seen = await withRefreshContents(session(file), true, async () => JSON.parse(fs.readFileSync(file, "utf8")) as unknown);
    expect(seen).to.deep.equal({ [digest]: content.inputs!.objects });
    expect(fs.existsSync(file)).to.equal(false);
  });

  it("without --refresh nothing is written: the program's BundleContent Checks give the provider its manifests", async () => {
    const file = newContentFilePath();
    expect(await withRefreshContents(session(file), false, async () => fs.existsSync(file))).to.equal(false);
  });
});
