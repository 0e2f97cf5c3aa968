import { parseArgs } from "node:util";
import type { BudgetRaiseOutput } from "../contracts/tools/budgetTools.js";
import { COMMON, type Output, defined, oneOf, positionals, positiveInt, withServer } from "./args.js";
import { UsageError } from "./errors.js";
import { formatBudget } from "./budgetOutput.js";
import { formatJson } from "./output.js";

/** `loom budget raise`: t3_budget_raise as the owner (docs/budgets.md, "Pause and raise"). */
export const BUDGET_USAGE = `  loom budget raise (--task ID | --thread ID | --workflow ID) [--tokens N] [--turns N] [--spawns N]
                    [--cost-usd X] [--wall-clock-min N] [--on-exceeded stop|finish_turn|pause] [--json]`;

export const BUDGET_HELP = `Usage:
${BUDGET_USAGE}

  raise   Give a budget new, higher values for limits it already has. A tree
          paused on budget (onExceeded pause) goes on at once where it
          stopped: queued turns start, waiting workflow agent() calls proceed.

Name exactly one budget: --task (a delegated task's id), --thread (a root
thread) or --workflow. A raise never lowers or adds a limit. Takes
--state-dir DIR and --json. Exit codes as for loom threads.
`;

function costUsd(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0 || n > 1e6) throw new UsageError(`--cost-usd must be a positive number of dollars up to 1000000, got "${value}"`);
  return n;
}

export async function runBudget(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    out(BUDGET_HELP);
    return 0;
  }
  if (sub === undefined || sub.startsWith("-")) throw new UsageError("loom budget needs a command: raise (see loom budget --help)");
  if (sub !== "raise") throw new UsageError(`unknown budget command "${sub}" (see loom budget --help)`);
  const { values, positionals: args } = parseArgs({
    args: [...rest],
    options: {
      ...COMMON,
      task: { type: "string" },
      thread: { type: "string" },
      workflow: { type: "string" },
      tokens: { type: "string" },
      turns: { type: "string" },
      spawns: { type: "string" },
      "cost-usd": { type: "string" },
      "wall-clock-min": { type: "string" },
      "on-exceeded": { type: "string" },
    },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(BUDGET_HELP);
    return 0;
  }
  positionals("budget", "raise", args, []);
  const holders = defined({ taskId: values.task, threadId: values.thread, workflowId: values.workflow });
  if (Object.keys(holders).length !== 1) throw new UsageError("loom budget raise needs exactly one of --task, --thread, --workflow");
  const minutes = positiveInt("wall-clock-min", values["wall-clock-min"], 1, 30 * 24 * 60);
  const limits = defined({
    tokens: positiveInt("tokens", values.tokens, 1, 1e12),
    turns: positiveInt("turns", values.turns, 1, 1_000_000),
    spawns: positiveInt("spawns", values.spawns, 0, 100_000),
    costUsd: costUsd(values["cost-usd"]),
    wallClockMs: minutes === undefined ? undefined : minutes * 60_000,
    onExceeded: oneOf("on-exceeded", values["on-exceeded"], ["stop", "finish_turn", "pause"] as const),
  });
  if (Object.keys(limits).length === 0) throw new UsageError("loom budget raise needs a limit to raise: --tokens, --turns, --spawns, --cost-usd, --wall-clock-min or --on-exceeded");
  return withServer(values["state-dir"], async (caller) => {
    const result = await caller.call<BudgetRaiseOutput>("t3_budget_raise", { ...holders, limits });
    out(values.json === true ? formatJson(result) : `raised the budget of ${result.holder.kind} ${result.holder.id}\n${formatBudget({ ...result, exceeded: null }).join("\n")}\n`);
  });
}
