import { expect } from "chai";

/**
 * The message a promise is rejected with (an Error of `type` when given); a promise that resolves
 * fails the test: the expected error did not happen.
 */
export async function rejectionOf(p: Promise<unknown>, type: abstract new (...args: never[]) => Error = Error): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(type);
    return (err as Error).message;
  }
  throw new Error("expected a failure, but it succeeded");
}
