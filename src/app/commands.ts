import { type CommandParseFailure, parseCommand } from "../contracts/commands.js";
import type { CommandReceipt } from "../contracts/envelopes.js";
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

/**
 * orchestration.dispatchCommand: validate a command from an outside client and
 * commit it. Only the owner may send raw commands; internal commands are
 * refused. A rejected command is not an error here: its receipt says so, and a
 * retry with the same commandId gets the same receipt.
 */
export async function dispatchCommand(ctx: AppContext, caller: Caller, raw: unknown): Promise<CommandReceipt> {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner may dispatch raw commands");
  const parsed = parseCommand(raw, { allowInternal: false });
  if (!parsed.ok) throw new CommandInputError(parsed.failure);
  return ctx.orchestrator.dispatch(parsed.command);
}
