import { setTimeout as delay } from "node:timers/promises";
import { parseTurnInput, resolveStep, splitTurnInput } from "./script.js";
import type { ScriptStep } from "./script.js";
import { executeStep } from "./steps.js";
import type { StepContext } from "./steps.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * One scripted turn from its input to its end status. The runner emits the
 * turn's items; the session emits turn.started and turn.completed around it.
 * A failure the script causes (bad script, unknown template variable, a
 * refused write, a `fail` step) is reported as an error item naming the step
 * and ends the turn failed; it is never thrown.
 */

export type TurnEnd =
  | { readonly status: "completed" }
  | { readonly status: "failed"; readonly error: string }
  /** The signal aborted; the session has already reported the end. */
  | { readonly status: "interrupted" };

export interface TurnRunContext extends Omit<StepContext, "variables"> {
  /** Waited at the start of the turn, before the input is read. */
  readonly turnDelayMs: number;
  /** The steps a `next` step left for this turn (taken once), or null. */
  takeNextSteps(): readonly ScriptStep[] | null;
  /** The output schema Loom gave the turn (structured results), or null. */
  readonly outputSchema: Readonly<Record<string, unknown>> | null;
}

export async function runTurn(input: string, ctx: TurnRunContext): Promise<TurnEnd> {
  try {
    if (ctx.turnDelayMs > 0) {
      await delay(ctx.turnDelayMs, undefined, { signal: ctx.signal });
    }
    const plan = parseTurnInput(input);
    switch (plan.kind) {
      case "echo": {
        const next = ctx.takeNextSteps();
        if (next !== null) return await runScript(next, { ...ctx, variables: new Map<string, unknown>([["input", input], ["context", ""], ["outputSchema", ctx.outputSchema]]) });
        ctx.emitItem({ kind: "assistant_message", text: `Echo: ${plan.text}` });
        return { status: "completed" };
      }
      case "invalid":
        return failTurn(ctx, plan.message);
      case "script":
        // `input` is the whole turn input, `context` what Loom put before the message ("" when nothing).
        return await runScript(plan.steps, { ...ctx, variables: new Map<string, unknown>([["input", input], ["context", splitTurnInput(input).context], ["outputSchema", ctx.outputSchema]]) });
      default: {
        const unexpected: never = plan;
        throw new Error(`unexpected plan ${JSON.stringify(unexpected)}`);
      }
    }
  } catch (error) {
    if (ctx.signal.aborted) return { status: "interrupted" };
    return failTurn(ctx, `scripted turn failed: ${messageOf(error)}`);
  }
}

async function runScript(steps: readonly ScriptStep[], ctx: StepContext): Promise<TurnEnd> {
  for (const [index, step] of steps.entries()) {
    ctx.signal.throwIfAborted();
    const where = `script[${index}] (${step.kind})`;
    let outcome;
    try {
      outcome = await executeStep(resolveStep(step, ctx.variables), ctx);
    } catch (error) {
      if (ctx.signal.aborted) return { status: "interrupted" };
      return failTurn(ctx, `${where}: ${messageOf(error)}`);
    }
    if (outcome.kind === "fail") {
      return failTurn(ctx, outcome.message === "" ? `${where}: the script failed` : outcome.message);
    }
  }
  return { status: "completed" };
}

function failTurn(ctx: Pick<StepContext, "emitItem">, message: string): TurnEnd {
  ctx.emitItem({ kind: "error", message });
  return { status: "failed", error: message };
}
