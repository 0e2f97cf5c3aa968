import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import type { Run } from "../../contracts/entities/runs.js";
import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { CreateThreadsInput, CreateThreadsOutput, TargetInput, ThreadLaunchInput, ThreadLaunchOutput } from "../../contracts/tools/threadTools.js";
import { type ActingCaller, type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { type RequestClaim, checkClaim, claimField, claimRequest } from "../idempotency.js";
import { resolveModes, resolveTarget } from "../policy.js";
import { touched } from "../touched.js";
import { actorOf, sentMessage } from "./sent.js";
import { threadLink, titleFromText } from "./views.js";

/** Threads launched with `scratch` live in this project, each in a folder of its own. */
export const SCRATCH_PROJECT = "scratch";

/** The project new top-level threads go to: explicit, else the caller's, else the first configured one. */
function projectFor(ctx: AppContext, caller: ActingCaller, projectId: string | undefined): string {
  const id = projectId ?? caller.thread?.projectId ?? ctx.projects[0]?.id ?? fail("invalid_request", "no project is configured");
  if (id !== SCRATCH_PROJECT && !ctx.projects.some((p) => p.id === id)) {
    fail("invalid_request", `unknown project ${id}; known: ${ctx.projects.map((p) => p.id).join(", ")}`);
  }
  return id;
}

/**
 * An agent may bind a new thread only to a checkout inside its project's root
 * or inside its own workspace: its filesystem reach never widens. The owner
 * (a person at the CLI) may bind any directory.
 */
function checkWorkspaceScope(ctx: AppContext, caller: ActingCaller, projectId: string, path: string): void {
  if (caller.kind === "owner") return;
  const target = realpathSync(path);
  const allowed = [ctx.projects.find((p) => p.id === projectId)?.root, caller.thread?.worktreePath]
    .filter((root): root is string => typeof root === "string" && existsSync(root))
    .map((root) => realpathSync(root));
  if (!allowed.some((root) => target === root || target.startsWith(`${root}${sep}`))) {
    fail("invalid_request", `worktreePath ${path} is outside project ${projectId} and your own workspace`);
  }
}

interface PlannedThread {
  readonly threadId: string;
  readonly title: string;
  readonly prompt: string | undefined;
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
}

interface NewThreadRequest {
  readonly prompt?: string;
  readonly title?: string;
  readonly target?: TargetInput;
  readonly runtimeMode?: RuntimeMode | "inherit";
  readonly interactionMode?: InteractionMode | "inherit";
}

async function plan(ctx: AppContext, caller: ActingCaller, entry: NewThreadRequest, threadId: string): Promise<PlannedThread> {
  const target = await resolveTarget(ctx.registry, caller, entry.target);
  const modes = resolveModes(caller, target.availability, entry);
  const title = entry.title ?? (entry.prompt === undefined ? null : titleFromText(entry.prompt)) ?? "New thread";
  return { threadId, title, prompt: entry.prompt, providerInstanceId: target.providerInstanceId, model: target.model, ...modes };
}

interface Placement {
  readonly projectId: string;
  readonly worktreePath: string | undefined;
  readonly branch: string | undefined;
}

/**
 * Create one planned thread (and start its run when it has a prompt). The
 * answer is read from the committed thread, so a retried request reports the
 * work it created the first time.
 */
async function createPlanned(
  ctx: AppContext,
  caller: ActingCaller,
  ids: ReturnType<typeof requestIds>,
  index: number,
  planned: PlannedThread,
  place: Placement,
  claim: RequestClaim | null,
): Promise<CreateThreadsOutput["threads"][number]> {
  const actor = actorOf(caller.kind);
  const created = await execute(ctx, {
    type: "thread.create",
    commandId: ids.command(`create:${index}`),
    ...claimField(claim),
    data: {
      threadId: planned.threadId,
      projectId: place.projectId,
      title: planned.title,
      modelSelection: { providerInstanceId: planned.providerInstanceId, model: planned.model },
      runtimeMode: planned.runtimeMode,
      interactionMode: planned.interactionMode,
      ...(place.worktreePath === undefined ? {} : { worktreePath: place.worktreePath }),
      ...(place.branch === undefined ? {} : { branch: place.branch }),
      ...actor,
    },
  });
  checkClaim(ctx, claim);
  const thread = touched(created.events).threads.get(planned.threadId) ?? ctx.orchestrator.state.threads.get(planned.threadId)!;
  // The creating thread's timeline points at the new thread.
  if (caller.kind === "thread" && caller.thread !== null) {
    await execute(ctx, {
      type: "thread.created.record",
      commandId: ids.command(`record:${index}`),
      data: { threadId: caller.thread.id, childThreadId: planned.threadId, ...(caller.activeRun === null ? {} : { runId: caller.activeRun.id }) },
    });
  }
  let run: Run | null = null;
  if (planned.prompt !== undefined) {
    const messageId = ids.message(index);
    const executed = await execute(ctx, {
      type: "message.dispatch",
      commandId: ids.command(`send:${index}`),
      data: { threadId: planned.threadId, text: planned.prompt, messageId, runId: ids.run(index), ...actor },
    });
    run = sentMessage(ctx, executed, planned.threadId, messageId).run;
  }
  return {
    threadId: thread.id,
    link: threadLink(ctx.environmentId, thread.id),
    title: thread.title,
    providerInstanceId: thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId ?? planned.providerInstanceId,
    model: thread.modelSelection?.model ?? null,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    runId: run?.id ?? null,
    status: run?.status ?? "idle",
  };
}

/**
 * create_threads: 1 to 20 ordinary top-level threads in the caller's project,
 * branch and worktree, without sub-agent lineage. Every entry is resolved
 * before any thread is created, so a bad entry creates nothing; a reused
 * clientRequestId with a different request creates nothing either.
 */
export async function createThreads(ctx: AppContext, caller: Caller, input: CreateThreadsInput): Promise<CreateThreadsOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "create_threads");
  const claim = claimRequest(ctx, acting.requestScope, "create_threads", input);
  const ids = requestIds(acting, "create_threads", input.clientRequestId, ctx.random);
  const planned: PlannedThread[] = [];
  for (const [index, entry] of input.threads.entries()) {
    try {
      planned.push(await plan(ctx, acting, entry, ids.thread(index)));
    } catch (error) {
      if (error instanceof Error) error.message = `threads[${index}]: ${error.message}`;
      throw error;
    }
  }
  const place: Placement = {
    projectId: projectFor(ctx, acting, undefined),
    worktreePath: acting.thread?.worktreePath ?? undefined,
    branch: acting.thread?.branch ?? undefined,
  };
  const threads = [];
  for (const [index, entry] of planned.entries()) threads.push(await createPlanned(ctx, acting, ids, index, entry, place, index === 0 ? claim : null));
  return { threads };
}

/**
 * t3_thread_launch: one top-level thread bound to a workspace before its agent
 * starts. root (default): the project root; scratch: a folder of its own;
 * existing_worktree: a checkout that exists. Creating worktrees is not
 * supported yet and answers invalid_request.
 */
export async function launchThread(ctx: AppContext, caller: Caller, input: ThreadLaunchInput): Promise<ThreadLaunchOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_thread_launch");
  const strategy = input.scratch === true ? "scratch" : (input.workspaceStrategy ?? "root");
  if (strategy === "worktree") fail("invalid_request", "workspaceStrategy worktree is not supported by this server yet; use existing_worktree with a worktreePath, root or scratch");
  const ids = requestIds(acting, "t3_thread_launch", undefined, ctx.random);
  const threadId = ids.thread(0);
  const request = { prompt: input.message, title: input.title, target: input.target, runtimeMode: input.runtimeMode, interactionMode: input.interactionMode };
  const planned = await plan(ctx, acting, request, threadId);
  let projectId: string;
  let worktreePath: string | undefined;
  if (strategy === "scratch") {
    projectId = SCRATCH_PROJECT;
    worktreePath = join(ctx.scratchRoot, encodeURIComponent(threadId));
    mkdirSync(worktreePath, { recursive: true });
  } else if (strategy === "existing_worktree") {
    const path = input.worktreePath ?? fail("invalid_request", "existing_worktree needs a worktreePath");
    if (!existsSync(path) || !statSync(path).isDirectory()) fail("invalid_request", `worktreePath ${path} is not a directory`);
    projectId = projectFor(ctx, acting, input.projectId);
    checkWorkspaceScope(ctx, acting, projectId, path);
    worktreePath = path;
  } else {
    projectId = projectFor(ctx, acting, input.projectId);
  }
  const created = await createPlanned(ctx, acting, ids, 0, planned, { projectId, worktreePath, branch: undefined }, null);
  return { ...created, projectId, workspaceStrategy: strategy, worktreePath: worktreePath ?? null };
}
