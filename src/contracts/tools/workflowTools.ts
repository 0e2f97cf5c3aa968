import { z } from "zod";
import { BudgetLimitsSchema, BudgetReachedSchema, BudgetRemainingSchema, BudgetSpendSchema } from "../entities/budgets.js";
import { FailureSchema } from "../entities/fields.js";
import { WorkflowStatusSchema, WorkflowStepStatusSchema } from "../entities/workflows.js";
import { DRY_RUN_DESCRIPTION, LaunchEstimateSchema } from "./launchEstimate.js";

/** The longest workflow script accepted, in characters. */
export const MAX_WORKFLOW_SCRIPT_CHARS = 200_000;
/** The longest `args`, as JSON text. */
export const MAX_WORKFLOW_ARGS_CHARS = 100_000;

/** t3_workflow_start, t3_workflow_status, t3_workflow_stop (spec 004's t3_workflow_* family; docs/workflows.md). */
export const WorkflowStartInput = z
  .object({
    script: z
      .string()
      .min(1)
      .max(MAX_WORKFLOW_SCRIPT_CHARS)
      .optional()
      .describe(
        "A JavaScript workflow script (Claude Code's workflow API): `export const meta = { name, description, phases }`, then top-level code using agent(prompt, { label, phase, schema, target, role, budget }), parallel(thunks), pipeline(items, ...stages), phase(title), args, and the library bestOfN, verify, loopUntil; its return value is the result. No file, network, clock or randomness access.",
      ),
    name: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a workflow name is letters, digits, _ . -")
      .optional()
      .describe("A named workflow instead of a script: .loom/workflows/<name>.js in your project, or a built-in (bestOfN, verify, loopUntil)"),
    args: z
      .unknown()
      .optional()
      .refine((value) => value === undefined || JSON.stringify(value).length <= MAX_WORKFLOW_ARGS_CHARS, { message: `at most ${MAX_WORKFLOW_ARGS_CHARS} characters of JSON` })
      .describe("JSON value the script reads as the global `args`"),
    mode: z.enum(["async", "wait"]).optional().describe("async (default): return at once with the workflowId; wait: return when the workflow ends or the wait cap passes (waitTimedOut)"),
    timeoutMs: z.number().int().min(0).max(3_600_000).optional().describe("For mode wait; capped by the server"),
    budget: BudgetLimitsSchema.optional().describe("Limits on what all of the workflow's agents may spend together; can only narrow the budgets you run under"),
    clientRequestId: z.string().min(1).max(200).optional().describe("Stable per workflow: a retry returns the same workflow instead of starting a second"),
    resumeFrom: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe("The workflowId of an ended (completed, failed or stopped) workflow you started: this script's agent() calls are answered from its journal up to the first call that differs (another prompt or options, or a call that did not complete there), and run fresh from there"),
    dryRun: z.boolean().optional().describe(DRY_RUN_DESCRIPTION),
  })
  .strict()
  .refine((input) => (input.script === undefined) !== (input.name === undefined), { message: "give exactly one of script or name" });
export type WorkflowStartInput = z.infer<typeof WorkflowStartInput>;

export const WorkflowStatusInput = z.object({ workflowId: z.string().min(1).max(512) }).strict();
export type WorkflowStatusInput = z.infer<typeof WorkflowStatusInput>;

export const WorkflowStopInput = z.object({ workflowId: z.string().min(1).max(512), reason: z.string().min(1).max(2_000).optional() }).strict();
export type WorkflowStopInput = z.infer<typeof WorkflowStopInput>;

const WorkflowStepView = z.object({
  index: z.number().int().positive(),
  label: z.string().nullable(),
  phase: z.string().nullable(),
  status: WorkflowStepStatusSchema,
  taskId: z.string().nullable(),
  childThreadId: z.string().nullable(),
  providerInstanceId: z.string().nullable(),
  result: z.unknown().optional(),
  error: FailureSchema.nullable(),
  /** The prior workflow's step that answered this call (resumeFrom). */
  resumedFrom: z.object({ workflowId: z.string(), stepId: z.string() }).optional(),
});

export const WorkflowOutput = z.object({
  workflowId: z.string(),
  name: z.string().nullable(),
  status: WorkflowStatusSchema,
  phases: z.array(z.object({ title: z.string(), detail: z.string().optional(), status: z.enum(["pending", "active", "done"]) })),
  currentPhase: z.string().nullable(),
  steps: z.array(WorkflowStepView),
  result: z.unknown().optional(),
  error: FailureSchema.nullable(),
  stopReason: z.string().nullable(),
  /** paused: an agent() call waits for a raise of this pool or of a budget above it (docs/budgets.md, "Pause and raise"). */
  budget: z.object({ limits: BudgetLimitsSchema, spent: BudgetSpendSchema, remaining: BudgetRemainingSchema, reached: BudgetReachedSchema, exceeded: z.boolean(), paused: z.boolean() }).optional(),
  waitTimedOut: z.boolean(),
});
export type WorkflowOutput = z.infer<typeof WorkflowOutput>;

/** t3_workflow_start: the workflow, or with dryRun the estimate (nothing started). */
export const WorkflowStartOutput = z.union([WorkflowOutput, LaunchEstimateSchema]);

/** The WebSocket method orchestration.getWorkflowScript: the script a workflow runs, with its args and status. */
export const WorkflowScriptOutput = z.object({
  workflowId: z.string(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  status: z.enum(["running", "completed", "failed", "stopped"]),
  script: z.string(),
  args: z.unknown(),
});
export type WorkflowScriptOutput = z.infer<typeof WorkflowScriptOutput>;
