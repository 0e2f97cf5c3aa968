import type { DelegatedTaskRole } from "../../contracts/entities/delegatedTasks.js";
import { parseAgentOptions } from "./agentStep.js";
import { WORKFLOW_LIBRARY } from "./library.js";
import { type AgentCall, DEFAULT_SANDBOX_LIMITS, runWorkflowScript, type SandboxLimits } from "./sandbox.js";

/**
 * A workflow's fan-out before it starts (t3_workflow_start dryRun;
 * docs/workflows.md, "Dry run"): the script runs in the sandbox as it would
 * for real, but every agent() call is answered by a stand-in at once, with
 * nothing recorded: an empty text, or for a call with a schema the smallest
 * value the schema allows. Calls answered together form a round (they would
 * run in parallel). A script whose control flow follows the answers may make
 * other calls for real; past MAX_DRY_RUN_CALLS the fan-out is not knowable.
 */

export const MAX_DRY_RUN_CALLS = 1_000;

export interface DryRunCall {
  readonly providerInstanceId: string | null;
  readonly model: string | null;
  readonly role: DelegatedTaskRole | null;
  readonly round: number;
}

export interface ScriptFanOut {
  readonly calls: readonly DryRunCall[];
  /** Null: every call is counted; else why the count is not the launch's (a cap, a script error on stand-in answers). */
  readonly unknowable: string | null;
}

class DryRunCap extends Error {
  readonly code = "dry_run_cap";
}

export async function scriptFanOut(script: string, args: unknown, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<ScriptFanOut> {
  const calls: DryRunCall[] = [];
  let round = 0;
  let waiting: { call: AgentCall; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  let capped = false;
  // Answer every call the script made in this turn together, then the next turn's calls are the next round.
  const flush = () => {
    const batch = waiting;
    waiting = [];
    for (const entry of batch) {
      try {
        const options = parseAgentOptions(entry.call.options);
        calls.push({ providerInstanceId: options.target?.providerInstanceId ?? null, model: options.target?.model ?? null, role: options.role ?? null, round });
        entry.resolve(options.schema === undefined ? "" : standIn(options.schema));
      } catch (error) {
        entry.reject(error);
      }
    }
    round += 1;
  };
  const outcome = await runWorkflowScript(
    script,
    args,
    {
      agent: (call) =>
        new Promise((resolve, reject) => {
          if (calls.length + waiting.length >= MAX_DRY_RUN_CALLS) {
            capped = true;
            reject(new DryRunCap(`more than ${MAX_DRY_RUN_CALLS} agent() calls`));
            return;
          }
          if (waiting.length === 0) setImmediate(flush);
          waiting.push({ call, resolve, reject });
        }),
    },
    limits,
    WORKFLOW_LIBRARY,
  );
  if (capped) return { calls, unknowable: `the script made more than ${MAX_DRY_RUN_CALLS} agent() calls on stand-in answers (a loop that ends on what the agents say)` };
  if (!outcome.ok) return { calls, unknowable: `the script failed on stand-in answers after ${calls.length} agent() calls: ${outcome.error}` };
  return { calls, unknowable: null };
}

/** The smallest value a JSON Schema allows, near enough for a script to read: required properties, minimum lengths and bounds. */
export function standIn(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null) return null;
  const node = schema as Record<string, unknown>;
  if ("const" in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const options = node[key];
    if (Array.isArray(options) && options.length > 0) return standIn(options[0]);
  }
  const type: unknown = Array.isArray(node.type) ? (node.type as unknown[])[0] : node.type;
  switch (type) {
    case "object": {
      const properties = (node.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      return Object.fromEntries(required.map((name) => [name, standIn(properties[name])]));
    }
    case "array": {
      const count = typeof node.minItems === "number" ? node.minItems : 0;
      return Array.from({ length: count }, () => standIn(node.items));
    }
    case "string":
      return "".padEnd(typeof node.minLength === "number" ? node.minLength : 0, "x");
    case "integer":
    case "number":
      return typeof node.minimum === "number" ? node.minimum : typeof node.exclusiveMinimum === "number" ? node.exclusiveMinimum + 1 : 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}
