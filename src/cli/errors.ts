/**
 * The `loom` command's failures and the exit code each one ends with.
 * A tool failure keeps the server's wire code (thread_not_found, ...).
 */
export const ExitCode = {
  ok: 0,
  /** A tool answered with a failure, or something else went wrong. */
  failure: 1,
  /** Bad arguments: unknown command or option, missing or malformed value. */
  usage: 2,
  /** No server answers for the state dir. */
  noServer: 3,
  /** A wait's --timeout passed before what it waited for ended (the result so far is still printed). */
  timedOut: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class UsageError extends Error {
  readonly code = "usage";
  override readonly name = "UsageError";
}

export class ServerNotRunningError extends Error {
  readonly code = "server_not_running";
  override readonly name = "ServerNotRunningError";

  constructor(
    readonly stateDir: string,
    detail?: string,
  ) {
    super(`no Loom server is running for state dir ${stateDir}; start one with \`loom serve\`${detail === undefined ? "" : ` (${detail})`}`);
  }
}

/** A tools/call answered with isError; message is `code: message` as the server gave it. */
export class ToolFailedError extends Error {
  readonly code = "tool_failed";
  override readonly name = "ToolFailedError";

  constructor(
    readonly tool: string,
    readonly failureCode: string,
    readonly failureMessage: string,
  ) {
    super(`${failureCode}: ${failureMessage}`);
  }
}

/** node:util parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes. */
function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}

/** What to print on stderr and the exit code for anything a command threw. */
export function describeFailure(error: unknown): { readonly line: string; readonly exitCode: ExitCode } {
  if (error instanceof ToolFailedError) return { line: error.message, exitCode: ExitCode.failure };
  if (error instanceof ServerNotRunningError) return { line: `loom: ${error.message}`, exitCode: ExitCode.noServer };
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError || isParseArgsError(error)) return { line: `loom: ${message}`, exitCode: ExitCode.usage };
  return { line: `loom: ${message}`, exitCode: ExitCode.failure };
}
