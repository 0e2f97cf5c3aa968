import { setTimeout as delay } from "node:timers/promises";
import type { ApprovalRequestKind, BackgroundTaskKind, ProviderItem } from "../events.js";
import { writeFileInCwd } from "./fileWrite.js";
import type { ToolCallResult } from "./mcpClient.js";
import { toolResultValue } from "./mcpClient.js";
import type { PendingRequests } from "./pendingRequests.js";
import { ApprovalDecision, RequestKind, parseApprovalResponse, parseUserInputResponse } from "./pendingRequests.js";
import type { ScriptStep } from "./script.js";
import { runShellCommand } from "./shell.js";

/**
 * Executing one resolved step. Each step emits its own items through the
 * context and stores what later steps may template on in `variables`.
 * Blocking steps honour `signal`: when it aborts they stop waiting and
 * throw, and the session has already ended the turn as interrupted.
 */

/** The id of the single question an `ask` step asks. */
export const ASK_QUESTION_ID = "q1";

export interface ToolCaller {
  /** Rejects (with a token-free message) when no tool answer came back. */
  callTool(name: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<ToolCallResult>;
}

export interface StepContext {
  readonly cwd: string;
  /** The turn's environment (owner-supplied secrets): added to the `run` steps' commands' environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  readonly commandTimeoutMs: number;
  /** This turn's script variables. */
  readonly variables: Map<string, unknown>;
  readonly requests: PendingRequests;
  /** Null: the session has no Loom MCP endpoint. */
  readonly tools: ToolCaller | null;
  /** Emit a finished item; `itemId` is one `nextItemId` reserved for it (a fresh one otherwise). */
  emitItem(item: ProviderItem, itemId?: string): void;
  /** Reserve the id of an item that streams before it completes (a command's output). */
  nextItemId(): string;
  /** Stream a chunk of the running command `itemId`'s output to live subscribers (never stored). */
  /** A chunk of a running command's output, with its command line. */
  emitOutput(itemId: string, text: string, command: string): void;
  /** Stream a piece of the assistant message `itemId` to live subscribers (never stored). */
  emitDelta(itemId: string, text: string): void;

  /** Leave a shell command running in the background: reported started now and ended when it exits, even after the turn. */
  startBackground(command: string, kind: BackgroundTaskKind, awaited: boolean): void;

  /** Remember steps for the session's next turn whose input is not a script. */
  setNextSteps(steps: readonly ScriptStep[]): void;
}

/** `fail`: the step ends the turn as failed with this message. */
export type StepOutcome = { readonly kind: "continue" } | { readonly kind: "fail"; readonly message: string };

const CONTINUE: StepOutcome = { kind: "continue" };

/** Throws on a failure the turn cannot go on from (a refused write, an abort). */
export async function executeStep(step: ScriptStep, ctx: StepContext): Promise<StepOutcome> {
  switch (step.kind) {
    case "say": {
      if (step.stream !== true) {
        ctx.emitItem({ kind: "assistant_message", text: step.text });
        return CONTINUE;
      }
      // Word by word (each piece keeps its trailing spaces), then the completed message under the same id.
      const itemId = ctx.nextItemId();
      for (const piece of step.text.match(/\S+\s*|\s+/g) ?? []) ctx.emitDelta(itemId, piece);
      ctx.emitItem({ kind: "assistant_message", text: step.text }, itemId);
      return CONTINUE;
    }
    case "call":
      await callTool(step.tool, step.args, step.as, ctx);
      return CONTINUE;
    case "sleep":
      await delay(step.ms, undefined, { signal: ctx.signal });
      return CONTINUE;
    case "ask":
      if (step.async) askAsync(step.question, ctx);
      else await ask(step.question, ctx);
      return CONTINUE;
    case "approve":
      await approve(step.requestKind, step.title ?? defaultTitle(step.requestKind), step.detail, ctx);
      return CONTINUE;
    case "write": {
      const change = await writeFileInCwd(ctx.cwd, step.path, step.content);
      ctx.emitItem({ kind: "file_change", changes: [change] });
      return CONTINUE;
    }
    case "run": {
      const itemId = ctx.nextItemId();
      const result = await runShellCommand(step.command, {
        cwd: ctx.cwd,
        env: ctx.env,
        timeoutMs: ctx.commandTimeoutMs,
        signal: ctx.signal,
        onOutput: (text) => ctx.emitOutput(itemId, text, step.command),
      });
      ctx.signal.throwIfAborted();
      ctx.emitItem({
        kind: "command_execution",
        command: step.command,
        cwd: ctx.cwd,
        exitCode: result.exitCode,
        outputPreview: result.outputPreview,
        outputTruncated: result.outputTruncated,
        durationMs: result.durationMs,
      }, itemId);
      return CONTINUE;
    }
    case "background":
      ctx.startBackground(step.command, step.taskKind, step.awaited);
      return CONTINUE;
    case "fail":
      return { kind: "fail", message: step.message };
    case "emit":
      ctx.emitItem(step.item);
      return CONTINUE;
    case "next":
      ctx.setNextSteps(step.steps);
      return CONTINUE;
    default: {
      const unexpected: never = step;
      throw new Error(`unexpected step ${JSON.stringify(unexpected)}`);
    }
  }
}

/**
 * A tool answer (isError included) is stored under `as`, so a script can
 * read a failure code; a call that got no answer is reported as a failed
 * item, stores nothing, and the script goes on.
 */
async function callTool(
  toolName: string,
  args: Readonly<Record<string, unknown>>,
  as: string | null,
  ctx: StepContext,
): Promise<void> {
  if (ctx.tools === null) {
    const message = "this session has no Loom MCP endpoint";
    ctx.emitItem({ kind: "dynamic_tool", toolName, arguments: args, result: { error: message }, status: "failed" });
    return;
  }
  let result: ToolCallResult;
  try {
    result = await ctx.tools.callTool(toolName, args, ctx.signal);
  } catch (error) {
    ctx.signal.throwIfAborted();
    const message = error instanceof Error ? error.message : String(error);
    ctx.emitItem({ kind: "dynamic_tool", toolName, arguments: args, result: { error: message }, status: "failed" });
    return;
  }
  if (as !== null) {
    ctx.variables.set(as, toolResultValue(result));
  }
  const status = result.isError === true ? "failed" : "completed";
  ctx.emitItem({ kind: "dynamic_tool", toolName, arguments: args, result, status });
}

async function ask(question: string, ctx: StepContext): Promise<void> {
  const requestId = ctx.requests.nextRequestId();
  const answered = ctx.requests.wait(
    requestId,
    RequestKind.userInput,
    (response) => parseUserInputResponse(response, ASK_QUESTION_ID),
    ctx.signal,
  );
  ctx.emitItem({ kind: "user_input_request", requestId, questions: [{ id: ASK_QUESTION_ID, question }] });
  const { answer, answers } = await answered;
  ctx.variables.set("answer", answer);
  ctx.variables.set("answers", answers);
}

/**
 * An asynchronous question (like a Codex async question): the request is
 * emitted with `blocking: false` and the script goes on. An answer that
 * arrives while the turn runs is stored as `answer` and `answers`.
 */
function askAsync(question: string, ctx: StepContext): void {
  const requestId = ctx.requests.nextRequestId();
  const answered = ctx.requests.wait(requestId, RequestKind.userInput, (response) => parseUserInputResponse(response, ASK_QUESTION_ID), ctx.signal);
  answered.then(
    ({ answer, answers }) => {
      ctx.variables.set("answer", answer);
      ctx.variables.set("answers", answers);
    },
    () => undefined, // the turn ended first
  );
  ctx.emitItem({ kind: "user_input_request", requestId, questions: [{ id: ASK_QUESTION_ID, question }], blocking: false });
}

async function approve(requestKind: ApprovalRequestKind, title: string, detail: string, ctx: StepContext): Promise<void> {
  const requestId = ctx.requests.nextRequestId();
  const decided = ctx.requests.wait(requestId, RequestKind.approval, parseApprovalResponse, ctx.signal);
  ctx.emitItem({ kind: "approval_request", requestId, requestKind, title, detail });
  const decision = await decided;
  ctx.variables.set("approval", { decision });
  if (decision === ApprovalDecision.decline || decision === ApprovalDecision.cancel) {
    const verb = decision === ApprovalDecision.decline ? "declined" : "cancelled";
    ctx.emitItem({ kind: "assistant_message", text: `Approval ${verb}: ${title}${detail === "" ? "" : ` (${detail})`}` });
  }
}

function defaultTitle(kind: ApprovalRequestKind): string {
  switch (kind) {
    case "command":
      return "Run a command";
    case "file-read":
      return "Read a file";
    case "file-change":
      return "Change files";
    case "mcp-elicitation":
      return "Answer an MCP request";
    case "permission":
      return "Grant a permission";
    default: {
      const unexpected: never = kind;
      return String(unexpected);
    }
  }
}
