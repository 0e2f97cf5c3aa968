import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Rejected, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";

/**
 * The thread, or a typed rejection when it does not exist (thread_not_found)
 * or was deleted (thread_deleted). Every command on an existing thread starts
 * here, so a deleted thread refuses all later commands the same way.
 */
export function liveThread(state: OrchestrationState, threadId: string): { kind: "found"; thread: AppThread } | Rejected {
  const thread = state.threads.get(threadId);
  if (thread === undefined) {
    return reject(RejectionCode.threadNotFound, `thread ${threadId} does not exist`);
  }
  if (thread.deletedAt !== null) {
    return reject(RejectionCode.threadDeleted, `thread ${threadId} was deleted`);
  }
  return { kind: "found", thread };
}

/** The thread after a change made at ctx.now: the changed fields plus updatedAt. */
export function changed(thread: AppThread, ctx: DecideContext, fields: Partial<Omit<AppThread, "id" | "updatedAt">>): AppThread {
  return { ...thread, ...fields, updatedAt: ctx.now };
}

/** The longest title a thread may carry, after trimming. */
export const MAX_TITLE_LENGTH = 500;

/** The trimmed title, or a typed rejection when it is blank or too long. */
export function validTitle(raw: string): { kind: "valid"; title: string } | Rejected {
  const title = raw.trim();
  if (title.length === 0) {
    return reject(RejectionCode.invalidTitle, "a title must not be blank");
  }
  if (title.length > MAX_TITLE_LENGTH) {
    return reject(RejectionCode.invalidTitle, `a title is at most ${MAX_TITLE_LENGTH} characters, got ${title.length}`);
  }
  return { kind: "valid", title };
}

/**
 * Re-check a mode against its closed set. Parsed commands already passed the
 * zod enum; this guards callers that hand decide a command directly.
 */
export function invalidModeRejection(
  kind: "runtime" | "interaction",
  value: string,
  allowed: readonly string[],
): Rejected | null {
  if (allowed.includes(value)) return null;
  return reject(RejectionCode.invalidMode, `${kind} mode "${value}" is not one of ${allowed.join(", ")}`);
}
