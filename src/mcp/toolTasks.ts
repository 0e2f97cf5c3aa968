import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, CreateTaskResult, RequestId, ServerCapabilities, Task, TaskCreationParams } from "@modelcontextprotocol/sdk/types.js";
import type { App } from "../app/app.js";
import type { DurableTask } from "../app/durableTasks/durableTasks.js";
import { TOOL_TASK_SUPPORT, type TaskTool } from "../app/durableTasks/taskSupport.js";
import { type TaskTiming, type WaitTaskStart, taskTiming } from "../app/durableTasks/toolTaskStart.js";
import { AppError, isUnexpectedFailure, toFailure } from "../app/errors.js";
import { type Failure, FailureCode } from "../contracts/failures.js";
import { BackgroundWaitInput } from "../contracts/tools/backgroundTools.js";
import { DelegateTaskInput } from "../contracts/tools/delegationTools.js";
import { ThreadSendInput, ThreadWaitInput } from "../contracts/tools/threadTools.js";
import { TOOL_CONTRACTS, type ToolName } from "../contracts/tools/toolContracts.js";
import { callerOfCall, callerOfScope } from "./callerOfScope.js";
import type { McpInvocationScope } from "./credentialRegistry.js";
import type { McpToolContext } from "./toolkit.js";

/**
 * MCP 2025-11-25 tasks over Loom's durable records (docs/mcp.md, "Tasks").
 * This adapter only translates: a task-augmented tools/call runs the tool as
 * its task-less asynchronous call (a wait tool: records what it waits on)
 * and answers the record's id as the task;
 * tasks/get, tasks/result, tasks/list and tasks/cancel are answered by the
 * app from the engine's state (src/app/durableTasks), never from this MCP
 * session's memory, so any node answers them, after a restart too.
 */

/** The app operations the tasks/* methods are answered by. */
export type McpTaskOperations = Pick<
  App,
  "getDurableTask" | "durableTaskResult" | "listDurableTasks" | "cancelDurableTask" | "watchDurableTask" | "startWaitTask" | "recordTaskHandle" | "startDelegationTask"
>;

/** What the server advertises: tasks for tools/call, with tasks/list and tasks/cancel. */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities["tasks"]> = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** A tool whose own call makes its durable record: run it, then record the task's handle (its ttl and poll interval). */
interface RecordedStart {
  readonly kind: "recorded";
  readonly tool: "t3_workflow_start";
  /** The task-less call whose answer names the record: it must return at once. */
  readonly argumentsOf: (args: Record<string, unknown>) => Record<string, unknown>;
  /** The record's id in the call's structuredContent: the MCP task id. */
  readonly taskIdOf: (result: Record<string, unknown>) => unknown;
}

/** A wait: its validated input becomes a handle recording what it waits on, instead of a wait. */
interface WaitStart {
  readonly kind: "wait";
  readonly startOf: (input: unknown) => WaitTaskStart;
}

/** delegate_task: its validated input is delegated in mode async with the task's handle in the same command. */
interface DelegationStart {
  readonly kind: "delegation";
}

/** How each tool of TOOL_TASK_SUPPORT "optional" starts its durable record. */
const TASK_STARTS: { readonly [N in TaskTool]: RecordedStart | WaitStart | DelegationStart } = {
  // Answers as soon as the task and its handle are recorded; clientRequestId keeps a retried call on the same task.
  delegate_task: { kind: "delegation" },
  t3_workflow_start: { kind: "recorded", tool: "t3_workflow_start", argumentsOf: (args) => ({ ...args, mode: "async" }), taskIdOf: (result) => result.workflowId },
  t3_thread_wait: { kind: "wait", startOf: (input) => ({ tool: "t3_thread_wait", input: ThreadWaitInput.parse(input) }) },
  t3_background_wait: { kind: "wait", startOf: (input) => ({ tool: "t3_background_wait", input: BackgroundWaitInput.parse(input) }) },
  t3_thread_send: { kind: "wait", startOf: (input) => ({ tool: "t3_thread_send", input: ThreadSendInput.parse(input) }) },
};

function isTaskTool(name: string): name is TaskTool {
  return Object.hasOwn(TOOL_CONTRACTS, name) && TOOL_TASK_SUPPORT[name as ToolName] === "optional";
}

/** A tool's tools/list `execution` entry. */
export function taskExecution(name: string): { readonly taskSupport: "optional" | "forbidden" } {
  return { taskSupport: Object.hasOwn(TOOL_CONTRACTS, name) ? TOOL_TASK_SUPPORT[name as ToolName] : "forbidden" };
}

export interface ToolCalls {
  /** The tool's own call (never throws: a failure is an isError result). */
  readonly call: (name: string, args: unknown, ctx: McpToolContext) => Promise<CallToolResult>;
  /** The call's lookup, capability check and argument validation alone: the parsed input, or the AppError it fails with. */
  readonly parse: (name: string, args: unknown, ctx: McpToolContext) => unknown;
  readonly log: (line: string) => void;
}

/**
 * A task-augmented tools/call: refused (-32601) for a tool whose taskSupport
 * is forbidden, and with bad task params, before anything runs; otherwise the
 * tool's own checks (capability, validation, policies, idempotency), and its
 * record answered as a CreateTaskResult. The requested ttl and pollInterval
 * are clamped to TOOL_TASK_BOUNDS and kept with the record. A refused call
 * is a JSON-RPC error carrying the tool failure: there is no task for it.
 */
export async function callToolAsTask(
  operations: McpTaskOperations,
  tools: ToolCalls,
  name: string,
  args: unknown,
  task: TaskCreationParams,
  ctx: McpToolContext,
): Promise<CreateTaskResult> {
  if (!isTaskTool(name)) throw new McpError(ErrorCode.MethodNotFound, `tool ${JSON.stringify(name)} cannot be called as a task (execution.taskSupport is forbidden)`);
  const caller = callerOfScope(ctx.scope);
  try {
    const timing = taskTiming(task);
    const start = TASK_STARTS[name];
    const taskId = await startTask(operations, tools, name, start, args, ctx, timing);
    return { task: mcpTask(operations.getDurableTask(caller, taskId)) };
  } catch (error) {
    throw jsonRpcErrorOf(error, `tools/call of ${name} as a task`, tools.log);
  }
}

function startTask(operations: McpTaskOperations, tools: ToolCalls, name: TaskTool, start: RecordedStart | WaitStart | DelegationStart, args: unknown, ctx: McpToolContext, timing: TaskTiming): Promise<string> {
  switch (start.kind) {
    case "wait":
      return operations.startWaitTask(callerOfScope(ctx.scope), start.startOf(tools.parse(name, args, ctx)), timing);
    case "delegation":
      refuseDryRun(name, args);
      return operations.startDelegationTask(callerOfCall(ctx), DelegateTaskInput.parse(tools.parse(name, args, ctx)), timing);
    case "recorded":
      return startRecorded(operations, tools, start, args, ctx, timing);
  }
}

function refuseDryRun(tool: TaskTool, args: unknown): void {
  const isObject = typeof args === "object" && args !== null && !Array.isArray(args);
  if (isObject && (args as Record<string, unknown>).dryRun === true) throw new McpError(ErrorCode.InvalidParams, `invalid_request: a dryRun of ${tool} records nothing, so it cannot be a task`);
}

async function startRecorded(operations: McpTaskOperations, tools: ToolCalls, start: RecordedStart, args: unknown, ctx: McpToolContext, timing: TaskTiming): Promise<string> {
  refuseDryRun(start.tool, args);
  const isObject = typeof args === "object" && args !== null && !Array.isArray(args);
  const result = await tools.call(start.tool, isObject ? start.argumentsOf(args as Record<string, unknown>) : args, ctx);
  const content = result.structuredContent ?? {};
  if (result.isError === true) {
    const failure = (content as { error?: Failure }).error ?? toFailure(new AppError(FailureCode.orchestration_error, "the tool call failed"));
    throw new McpError(ErrorCode.InvalidParams, `${failure.code}: ${failure.message}`, { error: failure });
  }
  const taskId = start.taskIdOf(content);
  if (typeof taskId !== "string") throw new McpError(ErrorCode.InternalError, `tool ${start.tool} answered no task id`);
  await operations.recordTaskHandle(callerOfScope(ctx.scope), start.tool, taskId, timing);
  return taskId;
}

/**
 * notifications/tasks/status for the tasks a session created, while it is
 * open: each status change after the CreateTaskResult, on the session's
 * standalone stream (the call's own response has ended). Advisory: a
 * notification that cannot be delivered is logged and the task goes on.
 */
export class TaskStatusNotifier {
  private readonly watches = new Map<string, { close(): void }>();
  private closed = false;

  constructor(
    private readonly server: Server,
    private readonly operations: McpTaskOperations,
    private readonly log: (line: string) => void,
  ) {}

  watch(scope: McpInvocationScope, created: Task): void {
    const { taskId } = created;
    if (this.closed || this.watches.has(taskId) || isTerminal(created.status)) return;
    const watch = this.operations.watchDurableTask(callerOfScope(scope), taskId, created.status, (task) => {
      if (isTerminal(task.status)) this.watches.delete(taskId);
      this.server.notification({ method: "notifications/tasks/status", params: mcpTask(task) }).catch((error: unknown) => {
        this.log(`mcp: notifications/tasks/status for ${taskId} not delivered: ${error instanceof Error ? error.message : String(error)}`);
      });
    });
    this.watches.set(taskId, watch);
  }

  /** The session closed: no more notifications. */
  close(): void {
    this.closed = true;
    for (const watch of this.watches.values()) watch.close();
    this.watches.clear();
  }
}

function isTerminal(status: Task["status"]): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

export interface TaskHandlerOptions {
  readonly scope: () => McpInvocationScope;
  readonly log: (line: string) => void;
  readonly responseSignal?: (requestId: RequestId) => AbortSignal | undefined;
  /** The success shape of a tool call (structuredContent and its JSON text). */
  readonly toolResult: (result: Record<string, unknown>) => CallToolResult;
}

/** Install tasks/get, tasks/result, tasks/list and tasks/cancel; the server must advertise TASKS_CAPABILITY. */
export function installTaskHandlers(server: Server, operations: McpTaskOperations, options: TaskHandlerOptions): void {
  const answer = async <T>(method: string, work: () => T | Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw jsonRpcErrorOf(error, method, options.log);
    }
  };
  const caller = () => callerOfScope(options.scope());
  server.setRequestHandler(GetTaskRequestSchema, (request) => answer("tasks/get", () => mcpTask(operations.getDurableTask(caller(), request.params.taskId))));
  server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) =>
    answer("tasks/result", async () => {
      const responseSignal = options.responseSignal?.(extra.requestId);
      const signal = responseSignal === undefined ? extra.signal : AbortSignal.any([extra.signal, responseSignal]);
      const result = await operations.durableTaskResult(caller(), request.params.taskId, { signal, progress: () => Promise.resolve() });
      const shaped = options.toolResult(result);
      return { ...shaped, _meta: { [RELATED_TASK_META_KEY]: { taskId: request.params.taskId } } };
    }),
  );
  server.setRequestHandler(ListTasksRequestSchema, (request) =>
    answer("tasks/list", () => {
      const page = operations.listDurableTasks(caller(), request.params?.cursor);
      return { tasks: page.tasks.map(mcpTask), ...(page.nextCursor === null ? {} : { nextCursor: page.nextCursor }) };
    }),
  );
  server.setRequestHandler(CancelTaskRequestSchema, (request) => answer("tasks/cancel", async () => mcpTask(await operations.cancelDurableTask(caller(), request.params.taskId))));
}

function mcpTask(task: DurableTask): Task {
  return { ...task };
}

/**
 * A tasks/* failure as a JSON-RPC error: a Loom failure (an unknown or
 * another caller's task: task_not_found) is InvalidParams, as MCP asks,
 * with `data.error` the typed failure; anything unexpected is InternalError
 * with the generic message, logged here.
 */
function jsonRpcErrorOf(error: unknown, method: string, log: (line: string) => void): McpError {
  if (error instanceof McpError) return error;
  const failure = toFailure(error);
  if (isUnexpectedFailure(error)) {
    log(`mcp: ${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return new McpError(ErrorCode.InternalError, `${failure.code}: ${failure.message}`, { error: failure });
  }
  return new McpError(ErrorCode.InvalidParams, `${failure.code}: ${failure.message}`, { error: failure });
}
