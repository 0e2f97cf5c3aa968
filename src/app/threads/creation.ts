import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import type { BudgetLimits } from "../../contracts/entities/budgets.js";
import { join, sep } from "node:path";
import type { ThreadCreateCommand } from "../../contracts/commands/threadCommands.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { ProjectConfig } from "../../config/config.js";
import { type JsonSchema, outputInstruction, schemaProblem } from "../../core/delegation/structuredResult.js";
import { isActiveRunStatus } from "../../core/run/lifecycle.js";
import { isWorkspaceError } from "../../workspaces/errors.js";
import { probeWorkingTree, refExists, resolveCommit } from "../../workspaces/repository.js";
import { UNOBSERVED_WAIT, waitUntil } from "../waits.js";
import { workspaceFailure } from "../workspaces/failures.js";
import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { CreateThreadsInput, CreateThreadsOutput, TargetInput, ThreadLaunchInput, ThreadLaunchOutput } from "../../contracts/tools/threadTools.js";
import { type ActingCaller, type Caller, ceilingOf, resolveCaller, traceField } from "../caller.js";
import { type AppContext, execute, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { type RequestClaim, checkClaim, claimField, claimRequest } from "../idempotency.js";
import { refuseEscalation, resolveModes, resolveTarget } from "../policy.js";
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

type RequestIds = ReturnType<typeof requestIds>;

interface PlannedThread {
  readonly threadId: string;
  readonly title: string;
  readonly prompt: string | undefined;
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly outputSchema: JsonSchema | undefined;
  /** t3_thread_launch's budget for the new root thread, set before its first message. */
  readonly budget?: BudgetLimits;
}

interface NewThreadRequest {
  readonly prompt?: string;
  readonly title?: string;
  readonly target?: TargetInput;
  readonly runtimeMode?: RuntimeMode | "inherit";
  readonly interactionMode?: InteractionMode | "inherit";
  readonly outputSchema?: JsonSchema;
}

async function plan(ctx: AppContext, caller: ActingCaller, entry: NewThreadRequest, threadId: string): Promise<PlannedThread> {
  const target = await resolveTarget(ctx.registry, caller, entry.target);
  const modes = resolveModes(caller, target.availability, entry);
  const title = entry.title ?? (entry.prompt === undefined ? null : titleFromText(entry.prompt)) ?? "New thread";
  const schema = entry.outputSchema;
  const problem = schema === undefined ? null : schemaProblem(schema);
  if (problem !== null) fail("invalid_request", `outputSchema is not a usable JSON Schema: ${problem}`);
  // The agent is told the answer's shape after the prompt, as a delegated child is.
  const prompt = entry.prompt === undefined || schema === undefined ? entry.prompt : `${entry.prompt}\n\n${outputInstruction(schema)}`;
  return { threadId, title, prompt, providerInstanceId: target.providerInstanceId, model: target.model, ...modes, outputSchema: schema };
}

interface Placement {
  readonly projectId: string;
  readonly worktreePath: string | undefined;
  readonly branch: string | undefined;
  /** A worktree of the thread's own, made by its first run. */
  readonly workspace?: WorktreeRequest;
}

/** The thread.create of one planned thread, carrying the caller's ceiling (the decider refuses modes broader than the caller's). */
function createCommand(caller: ActingCaller, ids: RequestIds, index: number, planned: PlannedThread, place: Placement, claim: RequestClaim | null): ThreadCreateCommand {
  return {
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
      ...(place.workspace === undefined ? {} : { workspace: place.workspace }),
      ...(planned.outputSchema === undefined ? {} : { outputSchema: planned.outputSchema }),
      ...actorOf(caller.kind),
      ceiling: ceilingOf(caller),
    },
  };
}

/**
 * Create one planned thread (and start its run when it has a prompt). The
 * answer is read from the committed thread, so a retried request reports the
 * work it created the first time.
 */
async function createPlanned(
  ctx: AppContext,
  caller: ActingCaller,
  ids: RequestIds,
  index: number,
  planned: PlannedThread,
  create: ThreadCreateCommand,
  claim: RequestClaim | null,
): Promise<CreateThreadsOutput["threads"][number]> {
  const actor = actorOf(caller.kind);
  const created = await execute(ctx, create);
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
  if (planned.budget !== undefined) {
    await execute(ctx, { type: "thread.budget.set", commandId: ids.command(`budget:${index}`), data: { threadId: planned.threadId, budget: planned.budget } });
  }
  let run: Run | null = null;
  if (planned.prompt !== undefined) {
    const messageId = ids.message(index);
    const executed = await execute(ctx, {
      type: "message.dispatch",
      commandId: ids.command(`send:${index}`),
      ...traceField(caller.identity),
      data: { threadId: planned.threadId, text: planned.prompt, messageId, runId: ids.run(index), ...actor, ceiling: ceilingOf(caller) },
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
  const creates = planned.map((entry, index) => createCommand(acting, ids, index, entry, place, index === 0 ? claim : null));
  // Every entry within the ceiling before the first is created, so a refused batch creates nothing.
  for (const [index, create] of creates.entries()) {
    try {
      refuseEscalation(ctx.orchestrator.state, [create]);
    } catch (error) {
      if (error instanceof Error) error.message = `threads[${index}]: ${error.message}`;
      throw error;
    }
  }
  const threads = [];
  for (const [index, entry] of planned.entries()) threads.push(await createPlanned(ctx, acting, ids, index, entry, creates[index]!, index === 0 ? claim : null));
  return { threads };
}

/**
 * t3_thread_launch: one top-level thread bound to a workspace before its agent
 * starts. root (default): the project root; scratch: a folder of its own;
 * existing_worktree: a checkout that exists; worktree: a new git worktree of
 * the project on a branch of its own, made (with the project's setup) by the
 * thread's first run before its agent starts.
 */
export async function launchThread(ctx: AppContext, caller: Caller, input: ThreadLaunchInput): Promise<ThreadLaunchOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_thread_launch");
  const strategy = input.scratch === true ? "scratch" : (input.workspaceStrategy ?? "root");
  if (strategy !== "worktree" && (input.baseRef !== undefined || input.startFromOrigin !== undefined)) {
    fail("invalid_request", "baseRef and startFromOrigin apply to workspaceStrategy worktree only");
  }
  // A budget governs a root thread's tree; only the owner sets one (an agent can only narrow its own, through delegate_task or a workflow).
  if (input.budget !== undefined && acting.kind === "thread") fail("capability_denied", "only the owner launches a thread with a budget; an agent narrows its own through delegate_task or t3_workflow_start");
  const ids = requestIds(acting, "t3_thread_launch", undefined, ctx.random);
  const threadId = ids.thread(0);
  const request = {
    prompt: input.message,
    title: input.title,
    target: input.target,
    runtimeMode: input.runtimeMode,
    interactionMode: input.interactionMode,
    outputSchema: input.outputSchema,
  };
  const planned = await plan(ctx, acting, request, threadId);
  let projectId: string;
  let worktreePath: string | undefined;
  let workspace: WorktreeRequest | undefined;
  if (strategy === "worktree") {
    if (input.worktreePath !== undefined) fail("invalid_request", "workspaceStrategy worktree makes its own worktree; worktreePath is for existing_worktree");
    projectId = projectFor(ctx, acting, input.projectId);
    if (projectId === SCRATCH_PROJECT) fail("invalid_request", "the scratch project has no repository to make a worktree of");
    workspace = await worktreeRequest(ctx.projects.find((p) => p.id === projectId)!, input.baseRef, input.startFromOrigin ?? false);
  } else if (strategy === "scratch") {
    projectId = SCRATCH_PROJECT;
    worktreePath = join(ctx.scratchRoot, encodeURIComponent(threadId));
  } else if (strategy === "existing_worktree") {
    const path = input.worktreePath ?? fail("invalid_request", "existing_worktree needs a worktreePath");
    if (!existsSync(path) || !statSync(path).isDirectory()) fail("invalid_request", `worktreePath ${path} is not a directory`);
    projectId = projectFor(ctx, acting, input.projectId);
    checkWorkspaceScope(ctx, acting, projectId, path);
    worktreePath = path;
  } else {
    projectId = projectFor(ctx, acting, input.projectId);
  }
  const launched = input.budget === undefined ? planned : { ...planned, budget: input.budget };
  const create = createCommand(acting, ids, 0, launched, { projectId, worktreePath, branch: undefined, workspace }, null);
  // Nothing is made (not even the scratch folder) for a launch the ceiling refuses.
  refuseEscalation(ctx.orchestrator.state, [create]);
  if (strategy === "scratch") mkdirSync(worktreePath!, { recursive: true });
  const created = await createPlanned(ctx, acting, ids, 0, launched, create, null);
  if (workspace === undefined) return { ...created, projectId, workspaceStrategy: strategy, worktreePath: worktreePath ?? null };
  const made = await worktreeMade(ctx, threadId, created.runId);
  return { ...created, ...made, projectId, workspaceStrategy: strategy };
}

type WorktreeRequest = NonNullable<ThreadCreateCommand["data"]["workspace"]>;

/**
 * Check a worktree launch before anything is created: the project is a git
 * repository with a commit, and a given baseRef names a commit (or, with
 * startFromOrigin, has an origin/<baseRef>).
 */
async function worktreeRequest(project: ProjectConfig, baseRef: string | undefined, startFromOrigin: boolean): Promise<WorktreeRequest> {
  const probe = await probeWorkingTree(project.root);
  if (probe.tree === null) fail("workspace_unavailable", `project ${project.id} (${project.root}) cannot get worktrees: ${probe.reason}`);
  if (probe.tree.head === null) fail("workspace_unavailable", `project ${project.id} has no commit yet; a worktree needs one to start from`);
  if (baseRef !== undefined) {
    const fromOrigin = startFromOrigin && (await refExists(probe.tree.root, `refs/remotes/origin/${baseRef}`));
    if (!fromOrigin) {
      await resolveCommit(probe.tree.root, baseRef).catch((error: unknown) => {
        throw isWorkspaceError(error) ? workspaceFailure(error) : error;
      });
    }
  }
  return { strategy: "worktree", repoPath: probe.tree.root, baseRef: baseRef ?? null, startFromOrigin };
}

/** How long a launch waits for its worktree to exist, so it can answer with the path (the setup may still run). */
const WORKTREE_WAIT_MS = 10_000;

async function worktreeMade(ctx: AppContext, threadId: string, runId: string | null): Promise<{ worktreePath: string | null; branch: string | null; status: ThreadLaunchOutput["status"] }> {
  const state = ctx.orchestrator.state;
  const ended = () => runId === null || !isActiveRunStatus(state.runs.get(runId)?.status ?? "failed");
  await waitUntil(ctx, UNOBSERVED_WAIT, Math.min(ctx.maxWaitMs, WORKTREE_WAIT_MS), () => state.threads.get(threadId)?.worktreePath != null || ended(), () => `worktree of ${threadId}`);
  const thread = state.threads.get(threadId);
  return { worktreePath: thread?.worktreePath ?? null, branch: thread?.branch ?? null, status: runId === null ? "idle" : (state.runs.get(runId)?.status ?? "idle") };
}
