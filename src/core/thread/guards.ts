import type { AppThread } from "../../contracts/thread.js";
import { type Rejected, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";

/** The thread, or a typed rejection when it does not exist or was deleted. */
export function liveThread(state: OrchestrationState, threadId: string): { kind: "found"; thread: AppThread } | Rejected {
  const thread = state.threads.get(threadId);
  if (thread === undefined) {
    return reject("thread_not_found", `thread ${threadId} does not exist`);
  }
  if (thread.deletedAt !== null) {
    return reject("thread_deleted", `thread ${threadId} was deleted`);
  }
  return { kind: "found", thread };
}
