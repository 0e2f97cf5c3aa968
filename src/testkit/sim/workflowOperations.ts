import { startWorkflow } from "../../app/workflows/start.js";
import type { BudgetLimits } from "../../contracts/entities/budgets.js";
import type { Workflow } from "../../contracts/entities/workflows.js";
import type { WorkflowStartInput } from "../../contracts/tools/workflowTools.js";
import { workflowBudgetReached } from "../../core/budgets/workflowBudget.js";
import { type OperationWorld, describeOutcome, drawBudget, storm, unobservedWait } from "./operations.js";
import type { AgentContext } from "./simDriver.js";

/**
 * Workflow scripts in the simulation (docs/simulation.md, "Operations"): an
 * agent starts one through t3_workflow_start's app function with a script
 * drawn from the seed; the owner's raiseBudget (userOperations.ts) also
 * raises a pausing workflow's budget. The node's real WorkflowRunner runs the script
 * in the real sandbox; each agent() call is a delegated task of the agent's
 * thread, decided against the workflow's pool.
 */

/** An agent() call of a drawn script: its options, as a JavaScript literal. */
function callOptions(world: OperationWorld): string {
  const rng = world.rng;
  const options = {
    ...(rng.chance(0.5) ? { target: { providerInstanceId: rng.pick(world.instances) } } : {}),
    ...(rng.chance(0.15) ? { budget: drawBudget(world, "task") } : {}),
  };
  return JSON.stringify(options);
}

/**
 * A script drawn from the seed: a fan-out of 2 to 6 parallel agent() calls
 * (`parallel([...].map((i) => () => agent(...)))`), a chain of 2 to 4
 * sequential ones, or a fan-out then a chain. Most scripts catch a failed
 * call (budget_exceeded, agent_failed, ...) by its code and go on; the others
 * end failed at the first one, with the rest of a fan-out still running.
 */
export function drawWorkflowScript(world: OperationWorld): string {
  const rng = world.rng;
  const n = world.next();
  const shape = rng.pick(["fan-out", "chain", "fan-out then chain"] as const);
  const caught = rng.chance(0.7);
  const call = (prompt: string, label: string, options: string) => {
    const agent = `agent(${prompt}, { ...${options}, label: ${label} })`;
    return caught ? `${agent}.catch((error) => error.code ?? "failed")` : agent;
  };
  const lines = [`export const meta = { name: "sim workflow ${n}", phases: [{ title: "Fan out" }, { title: "Chain" }] };`, "let fanned = [];", "const chained = [];"];
  if (shape !== "chain") {
    const width = rng.int(2, 6);
    const indices = JSON.stringify(Array.from({ length: width }, (_, i) => i));
    lines.push('phase("Fan out");');
    lines.push(`fanned = await parallel(${indices}.map((i) => () => ${call(`"sim workflow ${n} fan-out " + i`, `"fan-out " + i`, callOptions(world))}));`);
  }
  if (shape !== "fan-out") {
    const length = rng.int(2, 4);
    lines.push('phase("Chain");');
    lines.push(`for (let i = 0; i < ${length}; i++) chained.push(await ${call(`"sim workflow ${n} step " + i + " after " + JSON.stringify(chained[chained.length - 1] ?? null).length`, `"step " + i`, callOptions(world))});`);
  }
  lines.push("return { fanned, chained };");
  return lines.join("\n");
}

/** t3_workflow_start as an agent: a drawn script, often under a drawn budget of its own, async or waiting, sometimes a retry storm of one clientRequestId. */
export async function startDrawnWorkflow(world: OperationWorld, agent: AgentContext): Promise<string> {
  const rng = world.rng;
  const budget = rng.chance(0.6) ? drawBudget(world, "root") : undefined;
  const clientRequestId = rng.chance(0.4) ? `workflow-${world.next()}` : undefined;
  const input: WorkflowStartInput = {
    script: drawWorkflowScript(world),
    ...(rng.chance(0.2) ? { mode: "wait" as const, timeoutMs: rng.int(0, 40_000) } : {}),
    ...(budget === undefined ? {} : { budget }),
    ...(clientRequestId === undefined ? {} : { clientRequestId }),
  };
  const start = () => world.invoke("agent.startWorkflow", (app, workflows) => startWorkflow(app, workflows, agent.caller, input, unobservedWait()));
  const outcomes = clientRequestId === undefined ? [await start()] : await storm(world, 3, start);
  return outcomes.map(describeOutcome).join(",");
}

/** Running workflows whose pool pauses when it runs out: what a raise lets go on. */
export function pausingWorkflows(world: OperationWorld): Workflow[] {
  return [...(world.state()?.workflows.values() ?? [])].filter((workflow) => workflow.status === "running" && workflow.budget?.onExceeded === "pause");
}

/** Whether the workflow's own pool ran out and paused it: its next agent() call waits for a raise. */
export function pausedOnItsPool(world: OperationWorld, workflow: Workflow): boolean {
  const state = world.state();
  return state !== null && workflowBudgetReached(state, workflow, world.now()) !== null;
}

/** Every numeric limit of a budget doubled: a raise (t3_budget_raise refuses one that changes nothing). */
export function doubled(limits: BudgetLimits): BudgetLimits {
  return Object.fromEntries(Object.entries(limits).map(([kind, limit]) => [kind, typeof limit === "number" ? limit * 2 : limit]));
}
