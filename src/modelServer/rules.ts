/**
 * Scripted answers: the first rule whose `when` matches a normalized request
 * answers it. No I/O here; the server feeds requests in arrival order.
 */
import type { ModelApi, NormalizedRequest, ResolvedReply, ResolvedToolCall, ToolRef } from "./normalized.js";
import type { RuleFault } from "./faults.js";
import { isSideRequest, sideReplyText } from "./sideRequests.js";

export interface RuleCondition {
  readonly api?: ModelApi;
  /** A tool whose full name equals or ends with this is offered ("delegate_task" matches "mcp__t3-code__delegate_task"). */
  readonly toolAvailable?: string;
  /** true: the last message carries tool results; false: it does not. */
  readonly lastIsToolResult?: boolean;
  /** The text of the last user message contains this (case-sensitive). */
  readonly lastUserIncludes?: string;
  /** Some message's text or tool result contains this (case-sensitive; the system prompt is not searched). */
  readonly anyMessageIncludes?: string;
  /** true: the request offers at least one tool. false or absent: no constraint. */
  readonly requireTools?: boolean;
}

export interface RuleToolCall {
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** Text, one tool call, several tool calls in one reply (parallel calls; at least one), or a failed answer (faults.ts). */
export type RuleReply =
  | { readonly text: string }
  | { readonly toolCall: RuleToolCall }
  | { readonly toolCalls: readonly RuleToolCall[] }
  | { readonly fault: RuleFault };

export interface ModelRule {
  readonly when?: RuleCondition;
  readonly reply: RuleReply;
  /** How many requests this rule may answer; unlimited when absent. */
  readonly times?: number;
}

/** The answer when no rule matches. */
export const DEFAULT_REPLY_TEXT = "OK";
export const TOOL_RESULT_TEMPLATE_LIMIT = 2_000;

/**
 * The tool a rule names, as offered in this request: an exact full name first,
 * then a namespaced tool's own name (codex), then a full name ending with it.
 */
export function findTool(tools: readonly ToolRef[], wanted: string): ToolRef | undefined {
  return (
    tools.find((tool) => tool.name === wanted) ??
    tools.find((tool) => tool.callName === wanted) ??
    tools.find((tool) => tool.name.endsWith(`__${wanted}`)) ??
    tools.find((tool) => tool.name.endsWith(wanted))
  );
}

export function lastUserText(request: NormalizedRequest): string {
  return request.messages.findLast((message) => message.role === "user")?.text ?? "";
}

export function lastToolResultText(request: NormalizedRequest): string {
  const results = request.messages.findLast((message) => message.toolResults.length > 0)?.toolResults;
  return results?.at(-1)?.text ?? "";
}

export function conditionHolds(when: RuleCondition | undefined, request: NormalizedRequest): boolean {
  if (when === undefined) return true;
  if (when.api !== undefined && when.api !== request.api) return false;
  if (when.requireTools === true && request.tools.length === 0) return false;
  if (when.toolAvailable !== undefined && findTool(request.toolRefs, when.toolAvailable) === undefined) return false;
  if (when.lastIsToolResult !== undefined) {
    const isToolResult = (request.lastMessage?.toolResults.length ?? 0) > 0;
    if (isToolResult !== when.lastIsToolResult) return false;
  }
  if (when.lastUserIncludes !== undefined && !lastUserText(request).includes(when.lastUserIncludes)) return false;
  if (when.anyMessageIncludes !== undefined) {
    const needle = when.anyMessageIncludes;
    const found = request.messages.some(
      (message) => message.text.includes(needle) || message.toolResults.some((result) => result.text.includes(needle)),
    );
    if (!found) return false;
  }
  return true;
}

/** Index of the rule that answers, or undefined. `uses[i]` counts rule i's earlier answers. */
export function chooseRule(rules: readonly ModelRule[], uses: readonly number[], request: NormalizedRequest): number | undefined {
  const index = rules.findIndex((rule, i) => {
    if (rule.times !== undefined && (uses[i] ?? 0) >= rule.times) return false;
    if (!conditionHolds(rule.when, request)) return false;
    // A call to a tool this request does not offer would be refused by the client.
    return ruleCalls(rule.reply).every((call) => findTool(request.toolRefs, call.tool) !== undefined);
  });
  return index === -1 ? undefined : index;
}

/** Fill `{{lastToolResult}}` (truncated) and `{{lastUser}}`; other text stays as written. */
export function renderTemplate(text: string, request: NormalizedRequest): string {
  return text
    .replaceAll("{{lastToolResult}}", () => lastToolResultText(request).slice(0, TOOL_RESULT_TEMPLATE_LIMIT))
    .replaceAll("{{lastUser}}", () => lastUserText(request));
}

function renderValue(value: unknown, request: NormalizedRequest): unknown {
  if (typeof value === "string") return renderTemplate(value, request);
  if (Array.isArray(value)) return value.map((item) => renderValue(item, request));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderValue(item, request)]));
  }
  return value;
}

/** The tool calls a rule's reply asks for, in order (none for text). */
export function ruleCalls(reply: RuleReply): readonly RuleToolCall[] {
  if ("text" in reply || "fault" in reply) return [];
  return "toolCall" in reply ? [reply.toolCall] : reply.toolCalls;
}

/**
 * The rule's reply for this request; undefined when one of its tools is not
 * offered. `callId(i)` names the i-th call of this reply.
 */
export function resolveReply(reply: Exclude<RuleReply, { readonly fault: RuleFault }>, request: NormalizedRequest, callId: (index: number) => string): ResolvedReply | undefined {
  if ("text" in reply) return { type: "text", text: renderTemplate(reply.text, request) };
  const calls: ResolvedToolCall[] = [];
  for (const [index, call] of ruleCalls(reply).entries()) {
    const tool = findTool(request.toolRefs, call.tool);
    if (tool === undefined) return undefined;
    calls.push({ callId: callId(index), tool, arguments: renderValue(call.arguments, request) as Record<string, unknown> });
  }
  const [first] = calls;
  if ("toolCall" in reply && first !== undefined) return { type: "toolCall", ...first };
  return calls.length === 0 ? undefined : { type: "toolCalls", calls };
}

export type RuleBookAnswer =
  | {
      readonly reply: ResolvedReply;
      readonly fault: null;
      /** Index of the rule that answered; undefined for the default or a side reply. */
      readonly ruleIndex: number | undefined;
      readonly side: boolean;
    }
  | { readonly reply: null; readonly fault: RuleFault; readonly ruleIndex: number; readonly side: false };

/** Rules plus how often each has answered; tool-call ids run call_1, call_2, ... for the server's life. */
export class RuleBook {
  #rules: readonly ModelRule[] = [];
  #uses: number[] = [];
  #calls = 0;

  constructor(rules: readonly ModelRule[] = []) {
    this.replace(rules);
  }

  /** New rules start with fresh `times` counts. */
  replace(rules: readonly ModelRule[]): void {
    const empty = rules.findIndex((rule) => "toolCalls" in rule.reply && rule.reply.toolCalls.length === 0);
    if (empty !== -1) throw new TypeError(`rules.${empty}.reply.toolCalls: at least one tool call is required`);
    this.#rules = [...rules];
    this.#uses = rules.map(() => 0);
  }

  answer(request: NormalizedRequest): RuleBookAnswer {
    if (isSideRequest(request)) return { reply: { type: "text", text: sideReplyText(request) }, fault: null, ruleIndex: undefined, side: true };
    const index = chooseRule(this.#rules, this.#uses, request);
    const rule = index === undefined ? undefined : this.#rules[index];
    if (index === undefined || rule === undefined) {
      return { reply: { type: "text", text: DEFAULT_REPLY_TEXT }, fault: null, ruleIndex: undefined, side: false };
    }
    if ("fault" in rule.reply) {
      this.#uses[index] = (this.#uses[index] ?? 0) + 1;
      return { reply: null, fault: rule.reply.fault, ruleIndex: index, side: false };
    }
    const first = this.#calls + 1;
    const reply = resolveReply(rule.reply, request, (offset) => `call_${first + offset}`);
    if (reply === undefined) throw new Error("chooseRule returned a rule whose tool is not offered");
    this.#calls += ruleCalls(rule.reply).length;
    this.#uses[index] = (this.#uses[index] ?? 0) + 1;
    return { reply, fault: null, ruleIndex: index, side: false };
  }
}
