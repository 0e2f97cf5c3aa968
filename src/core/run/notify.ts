import { EffectKind } from "../../contracts/effects.js";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import type { Changes } from "./changes.js";
import { activeRun, enqueue, newRun, queuedRuns, startRun, threadProvider, turnFacts } from "./lifecycle.js";

/** What a notice says and what it is about (spec 004's `notification` turn item). */
export interface NoticeBody {
  readonly title: string;
  readonly text: string;
  readonly sourceThreadId: string | null;
  readonly taskId?: string | null;
  readonly requestId?: string | null;
}

/** Where a notice went: steered into the running turn, or the input of a follow-up run (`runId` null when no provider can carry one). */
export interface NoticeDelivery {
  readonly runId: string | null;
  readonly delivery: "steered" | "queued";
  readonly item: TurnItemOf<"notification"> | null;
}

/**
 * Bring a notice to a thread's agent as a `notification` item: steered into
 * its running turn when `allowSteer` and the turn's provider can steer (like
 * a background task's completion), else the input of a `system_follow_up`
 * run that starts at once on an idle thread or queues at the back. A notice
 * whose thread has no available provider gets no run (`runId: null`).
 */
export function deliverNotice(changes: Changes, threadId: string, body: NoticeBody, options: { readonly allowSteer: boolean }): NoticeDelivery {
  // As this decision leaves it so far: a step before (a provider switch) is seen.
  const thread = changes.thread(threadId)!;
  const active = activeRun(changes, thread.id);
  const steerFacts = active === null ? null : turnFacts(changes.ctx, active);
  const messageId = changes.ctx.allocate.message();
  const fields = { title: body.title, text: body.text, sourceThreadId: body.sourceThreadId, taskId: body.taskId ?? null, requestId: body.requestId ?? null };
  if (options.allowSteer && active !== null && steerFacts !== null && steerFacts.capabilities.steering && active.status === "running" && active.interruptRequestedAt === null) {
    const item = changes.addItem(thread.id, active.id, { type: "notification", ...fields, delivery: "steered" }) as TurnItemOf<"notification">;
    changes.effect(EffectKind.steerTurn, thread.id, { threadId: thread.id, runId: active.id, messageId, text: body.text });
    return { runId: active.id, delivery: "steered", item };
  }
  const providerId = threadProvider(thread);
  const facts = providerId === null ? null : changes.ctx.providers(providerId);
  if (facts === null) return { runId: null, delivery: "queued", item: null };
  // The run's input is its notification item (Timeline.runInput), not a user message.
  const run = newRun(changes, thread, facts, { runId: changes.ctx.allocate.run(), kind: "system_follow_up", messageId: null });
  const item = changes.addItem(thread.id, run.id, { type: "notification", ...fields, delivery: "queued" }) as TurnItemOf<"notification">;
  const idle = active === null && !queuedRuns(changes, thread.id).some((queued) => !queued.held && queued.id !== run.id);
  if (idle) startRun(changes, run);
  else enqueue(changes, run, "back");
  return { runId: run.id, delivery: "queued", item };
}
