import { execFile } from "node:child_process";
import { workspacePathOf } from "../workspaces/paths.js";
import { type StepRuntime, WorkflowStepError, answered, callKeyOf, journalFinish, journalStart, liveWorkflow, stepIds } from "./agentStep.js";
import type { AgentCall } from "./sandbox.js";

/** The option that marks a host call as a workspace command (loopUntil's `until: { command }`), not an agent. */
export const COMMAND_OPTION = "__command";

/** A command check is killed after this long; its step fails with command_timeout. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;
/** The journal keeps the end of the command's output (stdout then stderr). */
const MAX_OUTPUT_CHARS = 4_000;

export interface CommandResult {
  readonly exitCode: number;
  readonly output: string;
}

export function isCommandCall(call: AgentCall): boolean {
  return call.options[COMMAND_OPTION] === true;
}

/**
 * Run a shell command in the parent thread's workspace as a journaled step:
 * a finished one is answered from the journal, so a replay does not run it
 * again; one cut short by a restart runs again. The script itself still
 * reaches no process: the command runs in the host, with the parent's
 * privileges, and only for a parent in full-access mode.
 */
export async function runCommandStep(rt: StepRuntime, call: AgentCall): Promise<CommandResult> {
  const callKey = callKeyOf(call);
  const ids = stepIds(rt.workflowId, callKey);
  const workflow = liveWorkflow(rt);
  const journaled = workflow.steps.find((step) => step.stepId === ids.stepId);
  if (journaled !== undefined && journaled.status !== "running") return answered(journaled) as CommandResult;
  const label = typeof call.options.label === "string" ? call.options.label : `command: ${call.prompt.slice(0, 80)}`;
  if (journaled === undefined) await journalStart(rt, ids, callKey, call, { label }, false);
  const parent = rt.ctx.orchestrator.state.threads.get(workflow.parentThreadId);
  if (parent === undefined || parent.runtimeMode !== "full-access") {
    const error = { code: "command_not_allowed", message: `a workspace command needs a parent thread in full-access mode (it is ${parent?.runtimeMode ?? "gone"})` };
    await journalFinish(rt, ids.stepId, { status: "failed", error });
    throw new WorkflowStepError(error.code, error.message);
  }
  const outcome = await runShell(call.prompt, workspacePathOf(rt.ctx, parent), rt.signal);
  if (rt.signal.aborted) throw new WorkflowStepError("workflow_stopped", `workflow ${rt.workflowId} stopped while a command was running`);
  if (outcome.timedOut) {
    const error = { code: "command_timeout", message: `the command ran longer than ${COMMAND_TIMEOUT_MS} ms: ${call.prompt}` };
    await journalFinish(rt, ids.stepId, { status: "failed", error });
    throw new WorkflowStepError(error.code, error.message);
  }
  const result: CommandResult = { exitCode: outcome.exitCode, output: outcome.output };
  await journalFinish(rt, ids.stepId, { status: "completed", result });
  return result;
}

function runShell(command: string, cwd: string, signal: AbortSignal): Promise<{ exitCode: number; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    execFile("/bin/sh", ["-c", command], { cwd, signal, timeout: COMMAND_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.slice(-MAX_OUTPUT_CHARS);
      if (error === null) return resolve({ exitCode: 0, output, timedOut: false });
      const failed = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: string | null };
      const timedOut = failed.killed === true && failed.signal === "SIGTERM" && !signal.aborted;
      const exitCode = typeof failed.code === "number" ? failed.code : 127;
      // A command that could not start at all has no output of its own: its error says why.
      resolve({ exitCode, output: typeof failed.code === "number" ? output : `${output}${failed.message}`.slice(-MAX_OUTPUT_CHARS), timedOut });
    });
  });
}
