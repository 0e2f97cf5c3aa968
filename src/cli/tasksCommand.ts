import { parseArgs } from "node:util";
import type { ToolOutput } from "../contracts/tools/toolContracts.js";
import { COMMON, type Output, positionals, withServer } from "./args.js";
import type { LoomToolCaller } from "./client.js";
import { UsageError } from "./errors.js";
import { formatBudget } from "./budgetOutput.js";
import { formatJson } from "./output.js";

/** `loom tasks status|cancel`: delegated tasks, by task id, child thread id, or a unique prefix of either. */
export const TASKS_USAGE = `  loom tasks status ID [--json]
  loom tasks cancel ID [--reason TEXT] [--json]`;

export const TASKS_HELP = `Usage:
${TASKS_USAGE}

  status   task_status: where a delegated task stands, its result when it
           has one, and a pending approval or question.
  cancel   task_cancel: cancel the task's child run.

ID is the task id (subagent:...), the child thread's id, or a unique prefix of
either. Both take --state-dir DIR and --json. Exit codes as for loom threads.
`;

type TaskResult = ToolOutput<"task_status">;

function formatTask(task: TaskResult & { cancelReason?: string | null }): string {
  const lines = [`task ${task.taskId}: ${task.status} (${task.workState})`, `child thread ${task.childThreadId} on ${task.providerInstanceId}${task.model === null ? "" : ` (${task.model})`}`];
  if (task.pendingApproval !== null) lines.push(`waiting on approval ${task.pendingApproval.requestId} (${task.pendingApproval.kind})`);
  if (task.hasPendingQuestion) lines.push("waiting on an answer (loom requests list)");
  if (task.cancelReason !== undefined && task.cancelReason !== null) lines.push(`cancelled: ${task.cancelReason}`);
  if (task.budget !== undefined) lines.push(...formatBudget(task.budget));
  if (task.summary !== null) lines.push("", task.summary);
  return `${lines.join("\n")}\n`;
}

async function resolveTask(caller: LoomToolCaller, ref: string): Promise<string> {
  return (await caller.api.request<{ taskId: string }>("GET", `/api/tasks/resolve?id=${encodeURIComponent(ref)}`)).taskId;
}

export async function runTasks(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError("loom tasks needs a command: status or cancel (see loom tasks --help)");
  if (sub === "--help" || sub === "-h" || sub === "help") {
    out(TASKS_HELP);
    return 0;
  }
  const { values, positionals: args } = parseArgs({ args: [...rest], options: { ...COMMON, reason: { type: "string" } }, allowPositionals: true });
  if (values.help === true) {
    out(TASKS_HELP);
    return 0;
  }
  if (sub !== "status" && sub !== "cancel") throw new UsageError(`unknown tasks command "${sub}" (see loom tasks --help)`);
  if (sub === "status" && values.reason !== undefined) throw new UsageError("--reason goes with loom tasks cancel");
  const [ref] = positionals("tasks", sub, args, ["ID"]);
  return withServer(values["state-dir"], async (caller) => {
    const taskId = await resolveTask(caller, ref!);
    const result =
      sub === "status"
        ? await caller.call<TaskResult>("task_status", { taskId })
        : await caller.call<ToolOutput<"task_cancel">>("task_cancel", { taskId, ...(values.reason === undefined ? {} : { reason: values.reason }) });
    out(values.json === true ? formatJson(result) : formatTask(result));
  });
}
