/**
 * The one error of an agent process spoken to over stdio (kit/stdioProcess.ts,
 * kit/jsonRpcProcess.ts, the ACP driver's SDK connection): why a request got
 * no answer. Drivers turn it into a ProviderError.
 */

export const StdioRpcErrorCode = {
  /** The executable could not be started (missing, not executable). */
  spawnFailed: "spawn_failed",
  /** The process answered the request with an error. */
  rpc: "rpc_error",
  /** No answer within the request timeout. */
  timeout: "timeout",
  /** The process exited (or was closed) before answering. */
  closed: "closed",
} as const;
export type StdioRpcErrorCode = (typeof StdioRpcErrorCode)[keyof typeof StdioRpcErrorCode];

export class StdioRpcError extends Error {
  constructor(
    readonly code: StdioRpcErrorCode,
    message: string,
    /** The protocol's error code, for `rpc_error` (JSON-RPC's `error.code`), when it has one. */
    readonly rpcCode: number | null = null,
    /** The protocol's error data (JSON-RPC's `error.data`), when the answer carried some: limit signals read it. */
    readonly data: unknown = undefined,
  ) {
    super(message);
    this.name = "StdioRpcError";
  }
}
