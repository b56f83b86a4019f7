/**
 * The contents handed over for a refresh (automation/engine/content-handover.ts): a file per opened
 * stack, whatever the stack's name, there only while the engine command that reads it runs.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { newContentFilePath, withContentHandedOver } from "../../automation/engine/content-handover";
import { engineTempDir } from "../../automation/engine/engine-tmp";

const contents = new Map([["d1", { "/ConfigMap/app/a": '{"kind":"ConfigMap"}' }]]);

describe("the contents handed over for a refresh (content-handover.ts)", () => {
  it("every open has a file of its own, in the private engine directory: two operations of one stack, or stacks a/b and a_b, never share one", () => {
    const [a, b] = [newContentFilePath(), newContentFilePath()];
    expect(a).to.not.equal(b);
    expect(path.dirname(a)).to.equal(engineTempDir());
  });

  it("the file holds the contents while the command runs, and is gone when it ends", async () => {
    const file = newContentFilePath();
    const seen = await withContentHandedOver(file, contents, async () => JSON.parse(fs.readFileSync(file, "utf8")) as unknown);
    expect(seen).to.deep.equal({ d1: { "/ConfigMap/app/a": '{"kind":"ConfigMap"}' } });
    expect(fs.statSync(engineTempDir()).mode & 0o777).to.equal(0o700);
    expect(fs.existsSync(file)).to.equal(false);
  });

  it("a command that fails leaves no file either, and its error is the one thrown", async () => {
    const file = newContentFilePath();
    let mode = 0;
    const failed = await withContentHandedOver(file, contents, () => {
      mode = fs.statSync(file).mode & 0o777;
      return Promise.reject(new Error("engine failed"));
    }).catch((err: Error) => err);
    expect((failed as Error).message).to.equal("engine failed");
    expect(mode, "only this user reads it").to.equal(0o600);
    expect(fs.existsSync(file)).to.equal(false);
  });
});
