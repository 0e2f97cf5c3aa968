/**
 * The one shape every model API request is reduced to before rules look at it,
 * and the one shape a rule's answer takes before an API encodes it.
 */

/** The model APIs the scripted server speaks. */
export const ModelApi = {
  responses: "responses",
  chat: "chat",
  anthropic: "anthropic",
  gemini: "gemini",
} as const;
export type ModelApi = (typeof ModelApi)[keyof typeof ModelApi];

/**
 * A tool as offered in one request. `name` is the full name the model sees
 * ("mcp__t3-code__delegate_task"); `callName` and `namespace` are what a call
 * must carry on the wire. Codex groups MCP tools in `{type:"namespace"}` tools:
 * there `namespace` is "mcp__t3-code" and `callName` the tool's own name.
 */
export interface ToolRef {
  readonly name: string;
  readonly callName: string;
  readonly namespace?: string;
  /** Responses API freeform tools (`type: "custom"`) take a string `input`, not JSON arguments. */
  readonly kind: "function" | "custom";
}

export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export interface ToolResultRecord {
  readonly callId: string;
  readonly text: string;
}

/**
 * One turn of the conversation. System and developer messages are folded into
 * `NormalizedRequest.system`, so roles here are user, assistant and tool; a
 * message that carries tool results has role "tool" (Anthropic and Gemini put
 * them in a user turn).
 */
export interface NormalizedMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly text: string;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly toolResults: readonly ToolResultRecord[];
}

export interface NormalizedRequest {
  readonly api: ModelApi;
  readonly model: string;
  readonly stream: boolean;
  /** Full tool names as the model sees them. */
  readonly tools: readonly string[];
  readonly toolRefs: readonly ToolRef[];
  readonly messages: readonly NormalizedMessage[];
  readonly lastMessage: NormalizedMessage | undefined;
  readonly system: string;
  /** Anthropic `max_tokens` / Responses `max_output_tokens`, when given. */
  readonly maxTokens: number | undefined;
}

/** One tool call of a reply, resolved against one request. */
export interface ResolvedToolCall {
  readonly callId: string;
  readonly tool: ToolRef;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** What the server answers, resolved against one request: text, one tool call, or several in one reply. */
export type ResolvedReply =
  | { readonly type: "text"; readonly text: string }
  | ({ readonly type: "toolCall" } & ResolvedToolCall)
  | { readonly type: "toolCalls"; readonly calls: readonly ResolvedToolCall[] };

/** The tool calls a reply carries, in order (none for text). */
export function toolCallsOf(reply: ResolvedReply): readonly ResolvedToolCall[] {
  if (reply.type === "text") return [];
  return reply.type === "toolCall" ? [reply] : reply.calls;
}

export function normalizedRequest(
  fields: Omit<NormalizedRequest, "tools" | "lastMessage" | "messages"> & { readonly messages: NormalizedMessage[] },
): NormalizedRequest {
  return {
    ...fields,
    tools: fields.toolRefs.map((tool) => tool.name),
    lastMessage: fields.messages.at(-1),
  };
}

export function message(role: NormalizedMessage["role"], text: string, extra: Partial<Pick<NormalizedMessage, "toolCalls" | "toolResults">> = {}): NormalizedMessage {
  return { role, text, toolCalls: extra.toolCalls ?? [], toolResults: extra.toolResults ?? [] };
}

/** Untrusted JSON helpers shared by the API normalizers. */
export type Json = Record<string, unknown>;

export function asObject(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Text of a content value that is a string or a list of `{ text }` parts. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .map((part) => asString(asObject(part)?.text) ?? "")
    .filter((text) => text !== "")
    .join("\n");
}

/** A tool output as text: strings stay, anything else becomes JSON. */
export function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return textOf(output);
  return JSON.stringify(output ?? null);
}
