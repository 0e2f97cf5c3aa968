import { mkdirSync } from "node:fs";
import type { AppThread } from "../../contracts/thread.js";
import type { TitlesConfig } from "../../config/config.js";
import { joinId } from "../../core/ids.js";
import type { NormalizedProviderEvent, ProviderSessionRuntime } from "../../providers/adapter.js";
import type { ProviderAvailability } from "../../providers/registry.js";
import { type ActingCaller, ceilingOf } from "../caller.js";
import { type AppContext, type Executed, execute, freshUuid, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { titleFromText } from "./views.js";

/** The first user message's text a titling turn sees, at most. */
const PROMPT_SOURCE_CHARS = 4_000;

/**
 * Titling turns in flight, so a shutdown can stop them. A titling turn is a
 * one-off provider session outside the thread: it is not thread work, so it
 * writes nothing to the log but its result (thread.title.regeneration.complete).
 */
export class TitleRegenerations {
  private readonly running = new Set<{ readonly controller: AbortController; readonly done: Promise<void> }>();

  constructor(
    readonly settings: TitlesConfig,
    readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Run `work` in the background; its errors are logged, never thrown. */
  track(work: (signal: AbortSignal) => Promise<void>): void {
    const controller = new AbortController();
    const entry = {
      controller,
      done: work(controller.signal).catch((error: unknown) => this.log(`loom: title regeneration failed: ${error instanceof Error ? error.message : String(error)}`)),
    };
    this.running.add(entry);
    void entry.done.finally(() => this.running.delete(entry));
  }

  /** Resolves when every titling turn started so far has finished. */
  async settled(): Promise<void> {
    await Promise.all([...this.running].map((entry) => entry.done));
  }

  /** Stop every titling turn and wait for them (server shutdown). */
  async close(): Promise<void> {
    for (const entry of this.running) entry.controller.abort();
    await this.settled();
  }
}

/** The title fallback: the first line of the thread's first user message (at most 60 characters). */
export function fallbackTitle(ctx: AppContext, thread: AppThread): string | null {
  const [first] = ctx.orchestrator.timeline.items(thread.id, { types: ["user_message"], limit: 1 });
  return first?.type === "user_message" ? titleFromText(first.text) : null;
}

/** A title from a model's reply: its first line without a "Title:" label, heading marks or quotes, at most 60 characters. */
export function titleFromReply(reply: string): string | null {
  const line = reply
    .split("\n")
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate !== "");
  if (line === undefined) return null;
  const cleaned = line
    .replace(/^#+\s*/, "")
    .replace(/^title\s*:\s*/i, "")
    .replace(/^["'`*_]+|["'`*_]+$/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return titleFromText(cleaned);
}

/** The provider instance that writes the title: the configured one, else the thread's own; null when it cannot run now. */
async function titlingProvider(ctx: AppContext, thread: AppThread): Promise<ProviderAvailability | null> {
  const id = ctx.titles.settings.providerInstanceId ?? thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId;
  if (id === null) return null;
  const availability = await ctx.registry.get(id);
  return availability !== null && availability.available && ctx.registry.driverFor(id) !== null ? availability : null;
}

/**
 * regenerate_title: the first-line title is shown at once with
 * titleRegenerating true; a short titling turn on the configured provider
 * instance (default: the thread's own) then replaces it
 * (thread.title.regeneration.complete). Without an available provider the
 * first-line title completes the regeneration at once. A rename meanwhile wins.
 */
export async function regenerateTitle(ctx: AppContext, acting: ActingCaller, thread: AppThread, clientRequestId: string | undefined): Promise<Executed> {
  const fallback = fallbackTitle(ctx, thread) ?? fail("invalid_request", `thread ${thread.id} has no message to make a title from`);
  const ids = requestIds(acting, `t3_thread_update:regenerate_title:${thread.id}`, clientRequestId);
  const provider = await titlingProvider(ctx, thread);
  const started = await execute(ctx, {
    type: "thread.metadata.update",
    commandId: ids.command("start"),
    data: { threadId: thread.id, title: fallback, titleRegenerating: true, ceiling: ceilingOf(acting) },
  });
  // A retried call finds its regeneration already under way (or done): nothing more to start.
  if (started.events.length === 0) return started;
  const complete = (title: string) =>
    ctx.orchestrator.execute({
      type: "thread.title.regeneration.complete",
      commandId: joinId("cmd", "title-regeneration", thread.id, started.receipt.sequence),
      data: { threadId: thread.id, title },
    });
  if (provider === null) {
    const done = await complete(fallback);
    return done.receipt.status === "accepted" ? { ...done, receipt: done.receipt } : started;
  }
  const source = ctx.orchestrator.timeline.items(thread.id, { types: ["user_message"], limit: 1 })[0];
  const text = source?.type === "user_message" ? source.text.slice(0, PROMPT_SOURCE_CHARS) : fallback;
  ctx.titles.track(async (signal) => {
    const title = await titlingTurn(ctx, provider, thread, text, signal).catch((error: unknown) => {
      ctx.titles.log(`loom: titling turn for thread ${thread.id} failed, using the first line: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    });
    // Refused when a rename won meanwhile: nothing to do then.
    await complete(title ?? fallback);
  });
  return started;
}

/** The titling prompt: the start of the conversation and what to answer. */
export function titlingPrompt(firstMessage: string): string {
  return [
    "Write a title of at most eight words for a conversation that starts with the message below.",
    "Answer with the title alone: no quotes, no label, no punctuation at the end.",
    "",
    "Message:",
    firstMessage,
  ].join("\n");
}

/**
 * One short turn on its own provider session, with no Loom tools, the
 * narrowest runtime mode the provider offers and the configured timeout.
 * Resolves with the title, or null when the reply had none.
 */
async function titlingTurn(ctx: AppContext, provider: ProviderAvailability, thread: AppThread, firstMessage: string, signal: AbortSignal): Promise<string | null> {
  const driver = ctx.registry.driverFor(provider.instance.id)!;
  const onThreadsProvider = provider.instance.id === (thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId);
  const model = ctx.titles.settings.model ?? (onThreadsProvider ? (thread.modelSelection?.model ?? null) : null) ?? provider.models[0] ?? null;
  const cwd = thread.worktreePath ?? ctx.projects.find((project) => project.id === thread.projectId)?.root ?? ctx.scratchRoot;
  mkdirSync(cwd, { recursive: true });
  const runId = joinId("run", "title", thread.id, freshUuid(ctx));
  const replies: string[] = [];
  let ended: (event: Extract<NormalizedProviderEvent, { type: "turn.completed" }>) => void = () => undefined;
  const turnEnded = new Promise<Extract<NormalizedProviderEvent, { type: "turn.completed" }>>((resolve) => {
    ended = resolve;
  });
  const timeout = AbortSignal.any([signal, AbortSignal.timeout(ctx.titles.settings.timeoutMs)]);
  let session: ProviderSessionRuntime | null = null;
  try {
    session = await driver.openSession({
      instance: provider.instance,
      threadId: thread.id,
      providerSessionId: joinId("provider-session", "title", thread.id, freshUuid(ctx)),
      cwd,
      runtimeMode: provider.capabilities?.runtimeModes[0] ?? "approval-required",
      interactionMode: "default",
      model,
      mcp: null,
      signal: timeout,
      onEvent: (event) => {
        if (event.type === "item.completed" && event.item.kind === "assistant_message") replies.push(event.item.text);
        if (event.type === "turn.completed" && event.runId === runId) ended(event);
      },
    });
    await session.startTurn({ runId, input: titlingPrompt(firstMessage) });
    const aborted = new Promise<null>((resolve) => timeout.addEventListener("abort", () => resolve(null), { once: true }));
    const end = await Promise.race([turnEnded, aborted]);
    if (end === null) throw new Error(signal.aborted ? "the server is shutting down" : `no title after ${ctx.titles.settings.timeoutMs} ms`);
    if (end.status !== "completed") throw new Error(`the titling turn ended ${end.status}${end.error === null ? "" : `: ${end.error}`}`);
    return titleFromReply(replies[replies.length - 1] ?? "");
  } finally {
    await session?.stop().catch(() => undefined);
  }
}

/**
 * After a restart no titling turn is running: a thread still marked
 * titleRegenerating gets its first-line title (or keeps its title).
 */
export async function reconcileTitleRegenerations(ctx: AppContext): Promise<number> {
  let completed = 0;
  for (const thread of ctx.orchestrator.state.threads.values()) {
    if (!thread.titleRegenerating || thread.deletedAt !== null) continue;
    const receipt = await ctx.orchestrator.dispatch({
      type: "thread.title.regeneration.complete",
      commandId: joinId("cmd", "title-regeneration", thread.id, "reconcile", ctx.orchestrator.state.lastSequence),
      data: { threadId: thread.id, title: fallbackTitle(ctx, thread) ?? thread.title },
    });
    if (receipt.status === "accepted") completed += 1;
  }
  return completed;
}
