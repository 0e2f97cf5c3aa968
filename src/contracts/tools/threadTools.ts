import { z } from "zod";
import { RunStatusSchema } from "../entities/runs.js";
import { BudgetExceededSchema, BudgetReachedSchema, BudgetRemainingSchema, BudgetLimitsSchema, BudgetSpendSchema } from "../entities/budgets.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { OutputSchemaInput } from "./outputSchema.js";
import { ItemViewSchema, LimitRecoveryViewSchema, LinkedPullRequestSchema, RunSummarySchema, ThreadStatusSchema, ThreadSummarySchema } from "./toolOutputs.js";

/**
 * Inputs and outputs of the thread tools (spec 000, Tool Surface). Field names follow the
 * spec; descriptions are what the model reads in tools/list.
 */
const ThreadIdInput = z.string().min(1).max(512).describe("Thread id, e.g. from t3_thread_list or a t3-thread:// link");
const ClientRequestIdInput = z
  .string()
  .min(1)
  .max(200)
  .describe("Idempotency key: retrying with the same value returns the same durable work instead of creating more");
/** Bounds of every tool input field (docs/mcp.md, Input limits). */
export const INPUT_LIMITS = {
  idChars: 512,
  providerIdChars: 128,
  modelChars: 256,
  titleChars: 500,
  textChars: 200_000,
  urlChars: 2_048,
  pathChars: 4_096,
  refChars: 256,
  /** Cursors and offsets into lists and timelines. */
  position: 1_000_000_000,
  pullRequestNumber: 2_147_483_647,
} as const;
const RuntimeModeInput = z.enum(["inherit", "approval-required", "auto-accept-edits", "full-access"]);
const InteractionModeInput = z.enum(["inherit", "plan", "default"]);

export const TargetInput = z
  .object({
    providerInstanceId: z.string().min(1).max(INPUT_LIMITS.providerIdChars).optional().describe("Exact provider instance; fails when unavailable"),
    driverKind: z.string().min(1).max(INPUT_LIMITS.providerIdChars).optional().describe("Any available instance of this driver (codex, claude, scripted, ...)"),
    model: z.string().min(1).max(INPUT_LIMITS.modelChars).optional().describe("A model the provider advertises"),
  })
  .strict();
export type TargetInput = z.infer<typeof TargetInput>;

/** Fallback targets one delegation may list. */
export const MAX_TARGET_FALLBACKS = 8;

/** delegate_task's target: TargetInput plus instances to start on, in order, when the one asked for is unavailable. */
export const DelegationTargetInput = TargetInput.extend({
  fallbacks: z
    .array(
      z
        .object({
          providerInstanceId: z.string().min(1).max(INPUT_LIMITS.providerIdChars),
          model: z.string().min(1).max(INPUT_LIMITS.modelChars).optional().describe("A model that instance advertises; omitted: its first"),
        })
        .strict(),
    )
    .min(1)
    .max(MAX_TARGET_FALLBACKS)
    .optional()
    .describe("Instances to start on, in order, when the target is unavailable (a usage limit, an outage, not installed); the child's timeline says which one it started on and why"),
}).strict();
export type DelegationTargetInput = z.infer<typeof DelegationTargetInput>;

export const CapabilitiesInput = z
  .object({
    search: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Find models by name (case-insensitive substring) across every provider, legacy models included; omitted models are counted in omittedModels"),
  })
  .strict();
export type CapabilitiesInput = z.infer<typeof CapabilitiesInput>;

export const ThreadListInput = z
  .object({
    projectId: z.string().min(1).max(INPUT_LIMITS.providerIdChars).optional().describe("Project to list; default: the calling thread's project"),
    title: z.string().min(1).max(200).optional().describe("Case-insensitive substring of the title"),
    status: z
      .enum(["idle", "active", "queued", "starting", "running", "waiting", "completed", "failed", "interrupted", "cancelled", "waiting_on_approval", "waiting_on_user_input", "waiting_on_subagent"])
      .optional()
      .describe("Latest run status; `active` matches any unfinished run, `waiting` any waiting_* status, `waiting_on_*` that one"),
    includeSubagents: z.boolean().optional().describe("Include app-owned sub-agent threads, delegated forks too (default false)"),
    snoozed: z.boolean().optional().describe("Only threads whose snooze is (true) or is not (false) in force; a pending request or a failure wakes a snoozed thread early"),
    includeArchived: z.boolean().optional(),
    limit: z.number().int().min(1).max(100).optional().describe("Page size, default 25"),
    offset: z.number().int().min(0).max(INPUT_LIMITS.position).optional(),
  })
  .strict();
export type ThreadListInput = z.infer<typeof ThreadListInput>;

export const ThreadReadInput = z
  .object({
    threadId: ThreadIdInput,
    view: z.enum(["messages", "activity"]).optional().describe("messages (default): user/assistant messages and plans; activity: every item, summarized"),
    beforePosition: z.number().int().min(0).max(INPUT_LIMITS.position).optional().describe("Read items before this position (pass earlierPosition)"),
    afterPosition: z.number().int().min(-1).max(INPUT_LIMITS.position).optional().describe("Read items after this position; -1 starts at the oldest item"),
    limit: z.number().int().min(1).max(200).optional().describe("Most items to return, default 50"),
    maxChars: z.number().int().min(1_000).max(30_000).optional().describe("Result size budget in characters, default and max 30000"),
  })
  .strict()
  .refine((input) => input.beforePosition === undefined || input.afterPosition === undefined, {
    message: "pass beforePosition or afterPosition, not both",
  });
export type ThreadReadInput = z.infer<typeof ThreadReadInput>;

export const ThreadUpdateInput = z
  .object({
    threadId: ThreadIdInput.optional().describe("Default: the calling thread"),
    action: z.enum(["rename", "regenerate_title", "set_budget"]),
    title: z.string().min(1).max(500).optional().describe("Required for rename; rejected for regenerate_title"),
    budget: BudgetLimitsSchema.nullable().optional().describe("set_budget (owner only, root threads): the tree-wide budget, or null to clear it; its wall-clock time starts over"),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type ThreadUpdateInput = z.infer<typeof ThreadUpdateInput>;

export const LinkPullRequestInput = z
  .object({
    threadId: ThreadIdInput.optional().describe("Default: the calling thread"),
    url: z.string().max(INPUT_LIMITS.urlChars).url(),
    number: z.number().int().positive().max(INPUT_LIMITS.pullRequestNumber).optional(),
    title: z.string().max(INPUT_LIMITS.titleChars).optional(),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type LinkPullRequestInput = z.infer<typeof LinkPullRequestInput>;

export const UnlinkPullRequestInput = z
  .object({
    threadId: ThreadIdInput.optional().describe("Default: the calling thread"),
    url: z.string().max(INPUT_LIMITS.urlChars).url().optional().describe("Default: the linked pull request"),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type UnlinkPullRequestInput = z.infer<typeof UnlinkPullRequestInput>;

export const ThreadSendInput = z
  .object({
    threadId: ThreadIdInput,
    message: z.string().min(1).max(200_000),
    mode: z
      .enum(["auto", "queue", "steer", "restart"])
      .optional()
      .describe("auto (default): start an idle thread, steer a steerable running turn, else queue; queue: run after active work; steer: only into a steerable running turn; restart: interrupt the running turn and run this next"),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type ThreadSendInput = z.infer<typeof ThreadSendInput>;

export const ThreadWaitInput = z
  .object({
    threadId: ThreadIdInput,
    runId: z.string().min(1).max(INPUT_LIMITS.idChars).optional().describe("Default: the latest run at call time"),
    timeoutMs: z.number().int().min(0).max(3_600_000).optional().describe("Capped by the server's wait limit"),
  })
  .strict();
export type ThreadWaitInput = z.infer<typeof ThreadWaitInput>;

export const ThreadInterruptInput = z
  .object({
    threadId: ThreadIdInput,
    runId: z.string().min(1).max(INPUT_LIMITS.idChars).optional().describe("Default: the newest interruptible run"),
  })
  .strict();
export type ThreadInterruptInput = z.infer<typeof ThreadInterruptInput>;

const NewThreadInput = z
  .object({
    prompt: z.string().min(1).max(200_000).optional().describe("Starts a run at once; without it the thread stays idle"),
    title: z.string().min(1).max(500).optional(),
    target: TargetInput.optional(),
    runtimeMode: RuntimeModeInput.optional(),
    interactionMode: InteractionModeInput.optional(),
    outputSchema: OutputSchemaInput.optional(),
  })
  .strict();

export const CreateThreadsInput = z
  .object({
    threads: z.array(NewThreadInput).min(1).max(20),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type CreateThreadsInput = z.infer<typeof CreateThreadsInput>;

export const ThreadLaunchInput = z
  .object({
    message: z.string().min(1).max(200_000),
    title: z.string().min(1).max(500).optional(),
    projectId: z.string().min(1).max(INPUT_LIMITS.providerIdChars).optional().describe("Default: the calling thread's project"),
    target: TargetInput.optional(),
    runtimeMode: RuntimeModeInput.optional(),
    interactionMode: InteractionModeInput.optional(),
    workspaceStrategy: z
      .enum(["root", "scratch", "worktree", "existing_worktree"])
      .optional()
      .describe("root (default): the project root; worktree: a new git worktree on a branch of its own (from baseRef); existing_worktree: worktreePath; scratch: a folder of its own"),
    scratch: z.boolean().optional().describe("Same as workspaceStrategy scratch: a folder of its own, no project"),
    baseRef: z.string().min(1).max(INPUT_LIMITS.refChars).optional().describe("worktree: the branch or commit to start from; default the project's current HEAD"),
    worktreePath: z.string().min(1).max(INPUT_LIMITS.pathChars).optional(),
    startFromOrigin: z.boolean().optional().describe("worktree: start from origin/<branch> when that ref exists locally (nothing is fetched)"),
    outputSchema: OutputSchemaInput.optional(),
    budget: BudgetLimitsSchema.optional().describe("Owner only: limits on what this root thread's whole tree may spend (docs/budgets.md); change or clear it with t3_thread_update set_budget"),
  })
  .strict();
export type ThreadLaunchInput = z.infer<typeof ThreadLaunchInput>;

// Outputs: the structuredContent each thread tool answers with.

export const CapabilitiesOutput = z.object({
  inherited: z.object({ providerInstanceId: z.string().nullable(), model: z.string().nullable() }).nullable(),
  runtimeMode: RuntimeModeSchema.nullable(),
  interactionMode: InteractionModeSchema.nullable(),
  providers: z.array(
    z.object({
      providerInstanceId: z.string(),
      driver: z.string(),
      displayName: z.string(),
      available: z.boolean(),
      canRunChildTasks: z.boolean(),
      reason: z.string().nullable(),
      /** While a usage limit makes the instance unavailable: when it resets (ISO 8601). */
      limitResetAt: z.string().optional(),
      models: z.array(z.string()),
      omittedModels: z.number().int(),
      runtimeModes: z.array(RuntimeModeSchema).optional(),
      steering: z.boolean(),
    }),
  ),
  features: z.object({ polling: z.boolean(), cancellation: z.boolean(), batchThreadCreation: z.boolean(), maxBatchThreads: z.number().int() }),
});
export type CapabilitiesOutput = z.infer<typeof CapabilitiesOutput>;

const CreatedThreadOutput = z.object({
  threadId: z.string(),
  link: z.string(),
  title: z.string(),
  providerInstanceId: z.string(),
  model: z.string().nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  runId: z.string().nullable(),
  status: ThreadStatusSchema,
});

export const CreateThreadsOutput = z.object({ threads: z.array(CreatedThreadOutput) });
export type CreateThreadsOutput = z.infer<typeof CreateThreadsOutput>;

export const ThreadLaunchOutput = CreatedThreadOutput.extend({
  projectId: z.string(),
  workspaceStrategy: z.enum(["root", "scratch", "worktree", "existing_worktree"]),
  worktreePath: z.string().nullable(),
  /** worktree: the new branch, once the worktree exists. */
  branch: z.string().nullable().optional(),
});
export type ThreadLaunchOutput = z.infer<typeof ThreadLaunchOutput>;

export const ThreadListOutput = z.object({
  projectId: z.string().nullable(),
  threads: z.array(ThreadSummarySchema),
  total: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int().nullable(),
});
export type ThreadListOutput = z.infer<typeof ThreadListOutput>;

export const ThreadReadOutput = z.object({
  thread: ThreadSummarySchema,
  runs: z.array(RunSummarySchema),
  view: z.enum(["messages", "activity"]),
  items: z.array(ItemViewSchema),
  earlierPosition: z.number().int().nullable(),
  nextPosition: z.number().int().nullable(),
  hasMore: z.boolean(),
  truncated: z.boolean(),
  /** A thread started with an output schema (or a delegated task's child with one): the validated JSON value, once it matched. */
  structuredResult: z.unknown().optional(),
  /** Such a thread: why there is no structured result (the validation errors); null while none is known. */
  structuredResultError: z.object({ message: z.string(), errors: z.array(z.string()) }).nullable().optional(),
  /** A root thread with a budget: its limits, its tree's spend, and the limit that ran out (null while none). */
  budget: z.object({ limits: BudgetLimitsSchema, spent: BudgetSpendSchema, remaining: BudgetRemainingSchema, reached: BudgetReachedSchema, exceeded: BudgetExceededSchema.nullable() }).optional(),
});
export type ThreadReadOutput = z.infer<typeof ThreadReadOutput>;

/** t3_thread_update, link_pull_request and unlink_pull_request answer with the thread's metadata after the change. */
export const ThreadMetadataOutput = z.object({
  threadId: z.string(),
  commandId: z.string(),
  sequence: z.number().int(),
  title: z.string(),
  titleRegenerating: z.boolean(),
  pullRequest: LinkedPullRequestSchema.nullable(),
});
export type ThreadMetadataOutput = z.infer<typeof ThreadMetadataOutput>;

export const ThreadSendOutput = z.object({
  threadId: z.string(),
  messageId: z.string().nullable(),
  runId: z.string().nullable(),
  delivery: z.enum(["started", "steered", "queued", "restarted"]),
  runStatus: RunStatusSchema.nullable(),
  commandId: z.string(),
  sequence: z.number().int(),
});
export type ThreadSendOutput = z.infer<typeof ThreadSendOutput>;

export const ThreadWaitOutput = z.object({
  threadId: z.string(),
  runId: z.string().nullable(),
  status: ThreadStatusSchema,
  terminal: z.boolean(),
  waitTimedOut: z.boolean(),
  result: z.string().nullable(),
  error: z.string().nullable(),
  endReason: z.string().nullable(),
  /** The wait timed out while a usage limit holds the run's work (terminal false; it resumes by itself after resetAt); absent otherwise. */
  limitRecovery: LimitRecoveryViewSchema.optional(),
});
export type ThreadWaitOutput = z.infer<typeof ThreadWaitOutput>;

export const ThreadInterruptOutput = z.object({
  threadId: z.string(),
  runId: z.string().nullable(),
  outcome: z.enum(["no_active_run", "already_terminal", "interrupt_requested"]),
  status: RunStatusSchema.nullable(),
});
export type ThreadInterruptOutput = z.infer<typeof ThreadInterruptOutput>;
