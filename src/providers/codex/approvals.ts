import { z } from "zod";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ApprovalRequestItem, ProviderItem, UserInputRequestItem } from "../events.js";
import { fileChange } from "./codexEvents.js";
import type {
  CommandExecutionApprovalDecision,
  CommandExecutionRequestApprovalResponse,
  FileChangeRequestApprovalResponse,
  McpServerElicitationRequestResponse,
  RequestId,
  ServerRequest,
  ThreadItem,
  ToolRequestUserInputResponse,
} from "./protocol.js";

/**
 * The approvals concern of the codex driver: server→client JSON-RPC requests
 * (command and file-change approvals, permission grants, MCP elicitations,
 * questions) become approval_request / user_input_request items, and Loom's
 * answer becomes the JSON-RPC result codex expects. Loom's requestId for an
 * item is the JSON-RPC id as a string, so respondToRequest answers exactly
 * that request. Pure: the pending map lives in the session.
 */

/** Loom's requestId for a JSON-RPC request id. */
export function loomRequestId(id: RequestId): string {
  return String(id);
}

/**
 * The item id of a request's item. Codex reuses the tool call's id for the
 * approval and for the command or file change that follows, so the request
 * gets its own.
 */
export function requestItemId(id: RequestId): string {
  return `request-${String(id)}`;
}

/** A request Loom has to answer, or null when the driver answers it itself (see `refusal`). */
export function requestItem(request: ServerRequest, started: ThreadItem | undefined): ProviderItem | null {
  const requestId = loomRequestId(request.id);
  switch (request.method) {
    case "item/commandExecution/requestApproval": {
      const { command, cwd, reason, kind } = request.params;
      const what = command ?? (started?.type === "commandExecution" ? started.command : "a command");
      const title = kind === "writeStdin" ? `Send input to ${what}` : `Run ${what}`;
      return approval(requestId, "command", title, [reason, cwd === undefined || cwd === null ? null : `in ${cwd}`]);
    }
    case "item/fileChange/requestApproval": {
      const changes = started?.type === "fileChange" ? started.changes.map(fileChange) : [];
      const files = changes.map((change) => `${change.kind} ${change.path}`);
      const title = changes.length === 1 ? `Edit ${changes[0]?.path ?? ""}` : changes.length > 1 ? `Edit ${changes.length} files` : "Apply a file change";
      const grant = request.params.grantRoot === undefined || request.params.grantRoot === null ? null : `write access under ${request.params.grantRoot}`;
      return approval(requestId, "file-change", title, [request.params.reason, grant, ...files]);
    }
    case "item/permissions/requestApproval":
      return approval(requestId, "permission", "Grant additional permissions", [request.params.reason, JSON.stringify(request.params.permissions)]);
    case "mcpServer/elicitation/request": {
      const params = request.params;
      return approval(requestId, "mcp-elicitation", `${params.serverName} asks: ${params.message}`, [params.mode === "url" ? params.url : null]);
    }
    case "item/tool/requestUserInput": {
      const questions = request.params.questions.map((q) => ({ id: q.id, question: q.question }));
      const item: UserInputRequestItem = { kind: "user_input_request", requestId, questions };
      return item;
    }
    default:
      return null;
  }
}

/** Why the driver refuses a request it does not map (dynamic tools, ChatGPT token refresh, legacy v1 approvals). */
export function refusal(request: ServerRequest): string {
  return `loom does not handle ${request.method}`;
}

function approval(requestId: string, requestKind: ApprovalRequestItem["requestKind"], title: string, details: readonly (string | null | undefined)[]): ApprovalRequestItem {
  const detail = details.filter((part): part is string => typeof part === "string" && part !== "").join("\n");
  return { kind: "approval_request", requestId, requestKind, title, detail };
}

/** Loom's approval decisions (contracts/turnItemParts.ts) and a dismissal. */
const LoomResponseSchema = z.union([
  z.object({ decision: z.enum(["accept", "accept_for_session", "acceptForSession", "decline", "cancel"]) }),
  z.object({ answers: z.record(z.string(), z.union([z.array(z.string()), z.string()])) }),
  z.object({ dismissed: z.literal(true) }),
]);
type LoomResponse = z.infer<typeof LoomResponseSchema>;
type Decision = "accept" | "acceptForSession" | "decline" | "cancel";

function decisionOf(response: LoomResponse, requestId: string): Decision {
  if ("dismissed" in response) return "cancel";
  if ("answers" in response) {
    throw new ProviderError(ProviderErrorCode.protocol, `request ${requestId} is an approval: respond with a decision`);
  }
  return response.decision === "accept_for_session" ? "acceptForSession" : response.decision;
}

/**
 * The JSON-RPC result for `request`, from Loom's response
 * (`{ decision }`, `{ answers }` or `{ dismissed: true }`). Throws
 * ProviderError protocol_error for a response of the wrong shape.
 */
export function codexResult(request: ServerRequest, response: unknown): unknown {
  const requestId = loomRequestId(request.id);
  const parsed = LoomResponseSchema.safeParse(response);
  if (!parsed.success) {
    throw new ProviderError(ProviderErrorCode.protocol, `request ${requestId} expects { decision }, { answers } or { dismissed: true }`);
  }
  const value = parsed.data;
  switch (request.method) {
    case "item/commandExecution/requestApproval": {
      const result: CommandExecutionRequestApprovalResponse = { decision: decisionOf(value, requestId) satisfies CommandExecutionApprovalDecision };
      return result;
    }
    case "item/fileChange/requestApproval": {
      const result: FileChangeRequestApprovalResponse = { decision: decisionOf(value, requestId) };
      return result;
    }
    case "item/permissions/requestApproval": {
      const decision = decisionOf(value, requestId);
      const granted = decision === "accept" || decision === "acceptForSession";
      return {
        permissions: granted ? grantedPermissions(request.params.permissions) : {},
        scope: decision === "acceptForSession" ? "session" : "turn",
      };
    }
    case "mcpServer/elicitation/request": {
      const decision = decisionOf(value, requestId);
      const action = decision === "acceptForSession" ? "accept" : decision;
      const result: McpServerElicitationRequestResponse = { action, content: action === "accept" ? {} : null, _meta: null };
      return result;
    }
    case "item/tool/requestUserInput": {
      if ("decision" in value) {
        throw new ProviderError(ProviderErrorCode.protocol, `request ${requestId} is a question: respond with answers`);
      }
      // A dismissed question gets no answers; the model carries on without them.
      const entries = "answers" in value ? Object.entries(value.answers) : [];
      const result: ToolRequestUserInputResponse = {
        answers: Object.fromEntries(entries.map(([id, answer]) => [id, { answers: typeof answer === "string" ? [answer] : answer }])),
      };
      return result;
    }
    default:
      throw new ProviderError(ProviderErrorCode.requestNotFound, `request ${requestId} (${request.method}) is not answered by Loom`);
  }
}

/** Grant what was asked for; the request and grant profiles differ only in nullability. */
function grantedPermissions(requested: Extract<ServerRequest, { method: "item/permissions/requestApproval" }>["params"]["permissions"]) {
  return {
    ...(requested.network === null ? {} : { network: requested.network }),
    ...(requested.fileSystem === null ? {} : { fileSystem: requested.fileSystem }),
  };
}
