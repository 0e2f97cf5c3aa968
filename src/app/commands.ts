import { type CommandParseFailure, parseCommand } from "../contracts/commands.js";
import type { CommandReceipt, StoredEvent } from "../contracts/envelopes.js";
import type { Caller } from "./caller.js";
import type { AppContext } from "./context.js";
import { AppError, fail } from "./errors.js";

/**
 * A raw command from outside that did not parse; nothing was written. On the
 * wire it is invalid_request, with the parse failure's code in `details.reason`.
 */
export class CommandInputError extends AppError {
  constructor(readonly failure: CommandParseFailure) {
    super("invalid_request", failure.message, { details: { reason: failure.code } });
    this.name = "CommandInputError";
  }
}

/** The ids an accepted command created, so a caller that let the server pick them can address what it made. */
export interface CreatedIds {
  readonly threadIds: readonly string[];
  readonly runIds: readonly string[];
}

/** A receipt, and for an accepted command the ids of the threads and runs it created. */
export type DispatchAnswer = CommandReceipt & { readonly created?: CreatedIds };

function createdBy(events: readonly StoredEvent[]): CreatedIds {
  const ids = (type: string, key: "thread" | "run") =>
    events.filter((event) => event.type === type).map((event) => ((event.data as Record<string, { id: string }>)[key]!).id);
  return { threadIds: ids("thread.created", "thread"), runIds: ids("run.created", "run") };
}

/**
 * orchestration.dispatchCommand: validate a command from an outside client and
 * commit it. Only the owner may send raw commands; internal commands are
 * refused. A rejected command is not an error here: its receipt says so, and a
 * retry with the same commandId gets the same receipt. An accepted receipt
 * carries `created` (read back from the log, so a retry gets it too).
 */
export async function dispatchCommand(ctx: AppContext, caller: Caller, raw: unknown): Promise<DispatchAnswer> {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner may dispatch raw commands");
  const parsed = parseCommand(raw, { allowInternal: false });
  if (!parsed.ok) throw new CommandInputError(parsed.failure);
  const receipt = await ctx.orchestrator.dispatch(parsed.command);
  if (receipt.status !== "accepted") return receipt;
  return { ...receipt, created: createdBy(await ctx.orchestrator.eventsOf(receipt)) };
}
