/**
 * The renderer a shard decision shares among its shards (core/renderer/render-memo.ts): a batch of content
 * jobs it has answered is answered from memory, a batch that reaches a cluster or downloads always runs,
 * and a failure is not kept.
 */
import { expect } from "chai";
import { rememberingRenderer } from "../../core/renderer/render-memo";
import type { Renderer, RendererRequest, RendererResponse } from "../../core/model/renderer-protocol";

function counting(fail = 0): { render: Renderer; asked: RendererRequest[] } {
  const asked: RendererRequest[] = [];
  let failures = fail;
  const render: Renderer = async (request) => {
    asked.push(request);
    if (failures-- > 0) throw new Error("the sandbox stopped");
    return { yaml: { a: { json: `{"n":${asked.length}}` } } } as unknown as RendererResponse;
  };
  return { render, asked };
}

describe("render memo: one decision's shards render a shared batch once", () => {
  it("answers an identical batch of content jobs from memory, concurrent ones included, each caller its own copy", async () => {
    const { render, asked } = counting();
    const memo = rememberingRenderer(render);
    const batch = (): RendererRequest => ({ yaml: { a: "x: 1" }, gitRepoOf: { yaml: { a: "repo" } } });
    const [first, second] = await Promise.all([memo(batch()), memo(batch())]);
    const third = await memo(batch());
    expect(asked).to.have.length(1);
    expect(second).to.deep.equal(first).and.to.deep.equal(third);
    (first.yaml as Record<string, unknown>).a = "changed by a planner";
    expect((await memo(batch())).yaml).to.deep.equal({ a: { json: '{"n":1}' } });
    await memo({ yaml: { a: "x: 2" }, gitRepoOf: { yaml: { a: "repo" } } });
    expect(asked).to.have.length(2);
  });

  it("always runs a batch that reads a cluster or downloads, and runs a failed batch again", async () => {
    const { render, asked } = counting();
    const memo = rememberingRenderer(render);
    for (const batch of [{ discovery: [] }, { discovery: [{ server: "https://a" }] }, { pulls: [{ bundle: "b" }] }] as unknown as RendererRequest[]) {
      await memo(batch);
      await memo(batch);
    }
    expect(asked).to.have.length(5); // twice each batch with a job; the empty discovery list has none: remembered
    // Content jobs beside a cluster read: it runs every time.
    const mixed = { yaml: { a: "x: 1" }, discovery: [{ server: "https://a" }] } as unknown as RendererRequest;
    await memo(mixed);
    await memo(mixed);
    expect(asked).to.have.length(7);
    const failing = counting(1);
    const memo2 = rememberingRenderer(failing.render);
    await memo2({ yaml: { a: "x" } }).then(
      () => expect.fail("the first call fails"),
      (err: Error) => expect(err.message).to.equal("the sandbox stopped"),
    );
    await memo2({ yaml: { a: "x" } });
    expect(failing.asked).to.have.length(2);
  });
});
