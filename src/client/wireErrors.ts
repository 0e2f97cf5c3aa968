import type { Failure } from "../contracts/failures.js";

/** A wire Failure answered by the server (or the connection's loss), as an Error. */
export class WireError extends Error {
  constructor(readonly failure: Failure) {
    super(`${failure.code}: ${failure.message}`);
    this.name = "WireError";
  }

  get code(): Failure["code"] {
    return this.failure.code;
  }
}

export const CONNECTION_LOST: Failure = {
  code: "orchestration_error",
  message: "the connection to the server was lost before the answer arrived; the request may or may not have run",
  retryable: true,
};
