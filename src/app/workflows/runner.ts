import { setMaxListeners } from "node:events";
import { DEFAULT_WORKFLOWS } from "../../config/config.js";
import type { Command } from "../../contracts/commands.js";
import { toDomainEvent } from "../../contracts/events.js";
import type { Workflow } from "../../contracts/entities/workflows.js";
import type { Subscription } from "../../store/eventStore.js";
import type { AppContext } from "../context.js";
import { resumeCursor, runAgentStep, type StepRuntime } from "./agentStep.js";
import { isCommandCall, runCommandStep } from "./commandStep.js";
import { WORKFLOW_LIBRARY } from "./library.js";
import { DEFAULT_SANDBOX_LIMITS, NEXT_TURN, type SandboxLimits, type SandboxTurn, runWorkflowScript } from "./sandbox.js";
import { workflowSummary } from "./view.js";

export interface WorkflowRunnerOptions {
  /** How many agent() tasks of one workflow run at once (the size guideline; config `workflows.maxConcurrentAgents`); more wait their turn. */
  readonly maxConcurrentAgents?: number;
  readonly limits?: SandboxLimits;
  readonly log?: (line: string) => void;
  /** How a script's sandbox lets the event loop turn between its steps (default one `setImmediate`); the simulator counts each turn (docs/simulation.md). */
  readonly turn?: SandboxTurn;
}

/**
 * Runs every workflow the log says is running (docs/workflows.md). It follows
 * the committed log: a `workflow.updated` with status running that this
 * process is not running yet starts the script; one that ended stops it. On
 * start it catches up from the folded state, so after a restart every running
 * workflow's script is re-run from the top and its agent() calls are answered
 * from the journal (finished steps) or re-attached to their tasks (running
 * ones) — no agent work is done twice.
 */
export class WorkflowRunner {
  private readonly live = new Map<string, AbortController>();
  /** Workflows whose result a t3_workflow_start wait is handing over: their end does not also wake the parent. */
  private readonly held = new Map<string, number>();
  private subscription: Subscription | null = null;
  private readonly log: (line: string) => void;
  private readonly finished = new Set<Promise<void>>();

  private get maxConcurrentAgents(): number {
    return this.options.maxConcurrentAgents ?? DEFAULT_WORKFLOWS.maxConcurrentAgents;
  }

  constructor(
    private readonly ctx: AppContext,
    private readonly options: WorkflowRunnerOptions = {},
  ) {
    this.log = options.log ?? (() => undefined);
  }

  async start(): Promise<void> {
    const state = this.ctx.orchestrator.state;
    const from = state.lastSequence;
    for (const workflow of state.workflows.values()) if (workflow.status === "running") this.launch(workflow);
    this.subscription = this.ctx.orchestrator.follow(from, (stored) => {
      const event = toDomainEvent(stored);
      if (event.type !== "workflow.updated") return;
      const workflow = event.data.workflow;
      if (workflow.status === "running" && !this.live.has(workflow.workflowId)) this.launch(workflow);
      else if (workflow.status !== "running") this.live.get(workflow.workflowId)?.abort();
    });
    await this.subscription.caughtUp;
  }

  /** Stop running scripts without recording anything: they stay running in the log and resume on the next start. */
  async stop(): Promise<void> {
    this.subscription?.close();
    for (const controller of this.live.values()) controller.abort();
    await Promise.allSettled([...this.finished]);
  }

  /** While held, the workflow's end is handed to a wait instead of a notice to the parent. */
  hold(workflowId: string): () => void {
    this.held.set(workflowId, (this.held.get(workflowId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(workflowId) ?? 1) - 1;
      if (left === 0) this.held.delete(workflowId);
      else this.held.set(workflowId, left);
    };
  }

  isRunning(workflowId: string): boolean {
    return this.live.has(workflowId);
  }

  private launch(workflow: Workflow): void {
    const controller = new AbortController();
    // Each running agent() call listens on the workflow's signal: as many as run at once, plus the script's own.
    setMaxListeners(this.maxConcurrentAgents + 8, controller.signal);
    this.live.set(workflow.workflowId, controller);
    const done = this.run(workflow, controller.signal)
      .catch((error: unknown) => this.log(`loom: workflow ${workflow.workflowId} failed to run: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        this.live.delete(workflow.workflowId);
        this.finished.delete(done);
      });
    this.finished.add(done);
  }

  private async run(workflow: Workflow, signal: AbortSignal): Promise<void> {
    const workflowId = workflow.workflowId;
    const resume = resumeCursor(this.ctx.orchestrator.state, this.ctx.orchestrator.state.workflows.get(workflowId) ?? workflow);
    const runtime: StepRuntime = {
      ...(resume === undefined ? {} : { resume }),
      ctx: this.ctx,
      workflowId,
      signal,
      acquire: semaphore(this.maxConcurrentAgents),
      dispatch: async (command: Command) => {
        const outcome = await this.ctx.orchestrator.execute(command);
        if (outcome.receipt.status === "rejected" && !IGNORED.has(outcome.receipt.rejection.code)) {
          this.log(`loom: workflow ${workflowId}: ${command.type} rejected: ${outcome.receipt.rejection.message}`);
        }
      },
    };
    let phases = 0;
    const outcome = await runWorkflowScript(
      workflow.script,
      workflow.args,
      {
        agent: (call) => (isCommandCall(call) ? runCommandStep(runtime, call) : runAgentStep(runtime, call)),
        onPhase: (title) => {
          phases += 1;
          // Progress is a report: a dispatch cut off (the server stopping) is logged, never left unhandled.
          runtime.dispatch({ type: "workflow.progress", commandId: `cmd:workflow-phase:${workflowId}:${phases}`, data: { workflowId, phase: title } }).catch((error: unknown) => {
            this.log(`loom: workflow ${workflowId}: recording phase ${JSON.stringify(title)} failed: ${error instanceof Error ? error.message : String(error)}`);
          });
        },
      },
      this.options.limits ?? DEFAULT_SANDBOX_LIMITS,
      WORKFLOW_LIBRARY,
      this.options.turn ?? NEXT_TURN,
    );
    if (signal.aborted || this.ctx.orchestrator.state.workflows.get(workflowId)?.status !== "running") return;
    const error = outcome.ok ? null : { code: "workflow_script_error", message: outcome.error };
    const status = outcome.ok ? "completed" : "failed";
    const result = outcome.ok ? outcome.result : undefined;
    const current = this.ctx.orchestrator.state.workflows.get(workflowId)!;
    await runtime.dispatch({
      type: "workflow.finish",
      commandId: `cmd:workflow-finish:${workflowId}`,
      data: {
        workflowId,
        status,
        ...(result === undefined ? {} : { result }),
        error,
        summary: workflowSummary({ ...current, status, ...(result === undefined ? {} : { result }), error }),
        notify: !this.held.has(workflowId),
      },
    });
  }
}

/** Rejections a re-run meets by design: a step or phase already journaled, a workflow stopped meanwhile. */
const IGNORED: ReadonlySet<string> = new Set(["workflow_step_exists", "workflow_step_finished", "workflow_not_running"]);

function semaphore(size: number): () => Promise<() => void> {
  let free = Math.max(1, size);
  const waiting: (() => void)[] = [];
  return () =>
    new Promise((resolve) => {
      const grant = () => {
        free -= 1;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          free += 1;
          waiting.shift()?.();
        });
      };
      if (free > 0) grant();
      else waiting.push(grant);
    });
}
