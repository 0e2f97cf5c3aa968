/** The `--script FILE` format of `loom model-server`: `{ "rules": [ModelRule, ...] }`, checked strictly. */
import { z } from "zod";
import { ModelApi } from "./normalized.js";
import type { ModelRule } from "./rules.js";

const condition = z
  .object({
    api: z.enum(Object.values(ModelApi)).optional(),
    toolAvailable: z.string().min(1).optional(),
    lastIsToolResult: z.boolean().optional(),
    lastUserIncludes: z.string().optional(),
    anyMessageIncludes: z.string().optional(),
    requireTools: z.boolean().optional(),
  })
  .strict();

const toolCall = z.object({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }).strict();

const fault = z
  .object({
    status: z.number().int().min(400).max(599),
    retryAfterSeconds: z.number().int().min(0).optional(),
    message: z.string().optional(),
    body: z.unknown().optional(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

const reply = z.union([
  z.object({ text: z.string() }).strict(),
  z.object({ toolCall }).strict(),
  z.object({ toolCalls: z.array(toolCall).min(1) }).strict(),
  z.object({ fault }).strict(),
]);

const rule = z.object({ when: condition.optional(), reply, times: z.number().int().min(0).optional() }).strict();

const script = z.object({ rules: z.array(rule) }).strict();

export class RuleScriptError extends Error {
  readonly code = "invalid_rule_script";
  override readonly name = "RuleScriptError";
}

/** Rules from parsed JSON; throws RuleScriptError naming the first bad field. */
export function parseRuleScript(json: unknown): ModelRule[] {
  const result = script.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "script" : issue.path.join(".");
    throw new RuleScriptError(`${where}: ${issue?.message ?? "invalid"}`);
  }
  return result.data.rules;
}
