import type { AcceptedReceipt, RejectedReceipt } from "../contracts/envelopes.js";
import type { CommandReceiptDraft } from "./eventStore.js";
import { StoreError, StoreErrorCode } from "./storeErrors.js";

/**
 * Record-building helpers shared by every backend, so that the memory and
 * SQLite stores store byte-for-byte the same receipts and JSON.
 */

type AcceptedDraft = Extract<CommandReceiptDraft, { status: "accepted" }>;
type RejectedDraft = Extract<CommandReceiptDraft, { status: "rejected" }>;

/**
 * The stored receipt of an accepted command. Built field by field so extra
 * properties a caller left on the draft never reach the log.
 */
export function acceptedReceipt(draft: AcceptedDraft, sequence: number, eventCount: number): AcceptedReceipt {
  return {
    status: "accepted",
    commandId: draft.commandId,
    commandType: draft.commandType,
    sequence,
    eventCount,
    acceptedAt: draft.acceptedAt,
  };
}

export function rejectedReceipt(draft: RejectedDraft): RejectedReceipt {
  return {
    status: "rejected",
    commandId: draft.commandId,
    commandType: draft.commandType,
    rejection: { code: draft.rejection.code, message: draft.rejection.message },
    rejectedAt: draft.rejectedAt,
  };
}

/**
 * JSON.stringify that refuses values with no JSON form. A BigInt or a cycle
 * makes JSON.stringify throw; `undefined` (or a function) makes it return
 * undefined, which would otherwise surface later as a NOT NULL violation.
 * Throwing inside a commit aborts the whole batch.
 */
export function toJson(value: unknown, what: string): string {
  // Typed string, but undefined for undefined, functions and symbols.
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (cause) {
    throw new StoreError(StoreErrorCode.notSerializable, `${what} cannot be serialized to JSON`, { cause });
  }
  if (json === undefined) {
    throw new StoreError(StoreErrorCode.notSerializable, `${what} has no JSON form (undefined or a function)`);
  }
  return json;
}

/** ISO-8601 text for an epoch-millisecond clock reading. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
