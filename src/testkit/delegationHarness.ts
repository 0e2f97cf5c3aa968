import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { LoomConfigFile } from "../config/config.js";
import { type CreatedThread, LoomHarness, script } from "./loomHarness.js";
import type { LoomMcpClient } from "./mcpClient.js";

/**
 * Delegation integration tests on top of LoomHarness: several scripted
 * instances (a parent on one delegates to children on another) and helpers
 * to read tasks, notices and tool results from Loom's own state.
 */

/** `a` and `b` steer; `b` advertises its own model; `rigid` cannot steer, so notices queue behind its turns. */
export const DELEGATION_PROVIDERS: NonNullable<LoomConfigFile["providers"]> = [
  { id: "a", driver: "scripted" },
  { id: "b", driver: "scripted", models: ["b-1"] },
  { id: "rigid", driver: "scripted", options: { capabilities: { steering: false } } },
];

export type Step = Record<string, unknown>;

/** A judge's verdict as a JSON Schema: the structured-result tests' output schema. */
export const VERDICT_SCHEMA = {
  type: "object",
  properties: { winner: { type: "integer", minimum: 0 }, rationale: { type: "string" } },
  required: ["winner", "rationale"],
  additionalProperties: false,
} as const;

export function startDelegationHarness(config: Omit<LoomConfigFile, "providers"> = {}): Promise<LoomHarness> {
  return LoomHarness.start({ config: { providers: DELEGATION_PROVIDERS, ...config } });
}

/**
 * A script to hand to another agent inside a step: its `{{` are written as the
 * JSON escape `\u007b\u007b`, so the agent that sends it leaves its templates
 * alone and the agent that runs it (after JSON parsing) resolves them.
 */
export function childScript(...steps: readonly Step[]): string {
  return script(...steps).replaceAll("{{", "\\u007b\\u007b");
}

/** A script step calling delegate_task; the child runs `child` (script steps) on instance `b` unless `args.target` says otherwise. */
export function delegateStep(child: readonly Step[], args: Step = {}, as?: string): Step {
  return { call: "delegate_task", args: { task: childScript(...child), target: { providerInstanceId: "b" }, ...args }, ...(as === undefined ? {} : { as }) };
}

/** Launch a parent thread (as the owner) whose first turn runs `steps`. */
export function launchParent(h: LoomHarness, steps: readonly Step[], providerInstanceId = "a", title = "Parent"): Promise<CreatedThread & { runId: string }> {
  return h.launch({ title, message: script(...steps), target: { providerInstanceId } }) as Promise<CreatedThread & { runId: string }>;
}

/** The parent's tasks, in creation order. */
export function tasksOf(h: LoomHarness, parentThreadId: string): DelegatedTask[] {
  return [...h.state.tasks.values()].filter((task) => task.parentThreadId === parentThreadId);
}

export function onlyTask(h: LoomHarness, parentThreadId: string): DelegatedTask {
  const tasks = tasksOf(h, parentThreadId);
  if (tasks.length !== 1) throw new Error(`expected one task of ${parentThreadId}, found ${tasks.length}`);
  return tasks[0]!;
}

/** Wait until the parent has at least `count` tasks; returns them. */
export function waitForTasks(h: LoomHarness, parentThreadId: string, count = 1): Promise<DelegatedTask[]> {
  return h.until(() => {
    const tasks = tasksOf(h, parentThreadId);
    return tasks.length >= count ? tasks : null;
  }, `${count} task(s) of ${parentThreadId}`);
}

/** Wait until the task has its published result; returns it. */
export function waitForResult(h: LoomHarness, taskId: string, timeoutMs = 10_000): Promise<DelegatedTask> {
  return h.until(
    () => {
      const task = h.state.tasks.get(taskId);
      return task !== undefined && task.resultContextTransferId !== null ? task : null;
    },
    `task ${taskId} to settle (now ${h.state.tasks.get(taskId)?.status ?? "missing"})`,
    timeoutMs,
  );
}

/** What a thread received from the system: notices (notification items) and system user messages, in timeline order. */
export function systemMessages(h: LoomHarness, threadId: string): { text: string; runId: string | null }[] {
  return h.items(threadId).flatMap((item) =>
    (item.type === "user_message" && item.createdBy === "system") || item.type === "notification" ? [{ text: item.text, runId: item.runId }] : [],
  );
}

/** The structuredContent of each `toolName` call a thread's agent made, in order. */
export function toolResults<T = Record<string, unknown>>(h: LoomHarness, threadId: string, toolName: string): { status: string; result: T }[] {
  return h.items(threadId).flatMap((item) => {
    if (item.type !== "dynamic_tool" || item.toolName !== toolName) return [];
    const result = (item.result as { structuredContent?: T } | null)?.structuredContent as T;
    return [{ status: item.status, result }];
  });
}

/** Connect an MCP client with a credential of `threadId`, as that thread's agent would have. */
export async function connectAsThread(h: LoomHarness, threadId: string, providerInstanceId = "a"): Promise<LoomMcpClient> {
  const credential = await h.server.credentials.issue({
    environmentId: h.server.environmentId,
    threadId,
    providerInstanceId,
    providerSessionId: `provider-session:test:${crypto.randomUUID()}`,
  });
  return h.connect(credential.token, "loom-test-thread");
}
