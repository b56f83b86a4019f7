import { expect } from "chai";

/**
 * The error a promise is rejected with, an instance of `type`; a promise that resolves fails the test:
 * the expected error did not happen.
 */
export async function rejectionWith<T extends Error>(p: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(type);
    return err as T;
  }
  throw new Error("expected a failure, but it succeeded");
}

/** The message a promise is rejected with (an Error of `type` when given). */
export async function rejectionOf(p: Promise<unknown>, type: abstract new (...args: never[]) => Error = Error): Promise<string> {
  return (await rejectionWith(p, type)).message;
}
