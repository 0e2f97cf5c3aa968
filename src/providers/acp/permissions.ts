import type { PermissionOption, PermissionOptionKind, RequestPermissionRequest, RequestPermissionResponse, ToolKind } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import type { RuntimeMode } from "../../contracts/modes.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ApprovalRequestItem, ApprovalRequestKind } from "../events.js";

/**
 * The approvals concern of the ACP driver (pure). An agent asks
 * `session/request_permission` before a tool call; Loom either answers at
 * once from the session's runtime mode, or records an approval_request item
 * and answers with the owner's decision:
 *
 *   { decision: "accept" }              → the agent's allow_once option (else allow_always)
 *   { decision: "accept_for_session" }  → allow_always (else allow_once)
 *   { decision: "decline" }             → reject_once (else reject_always; else cancelled)
 *   { decision: "cancel" } | { dismissed: true } → the "cancelled" outcome
 */

const APPROVAL_KIND_OF_TOOL: { readonly [K in ToolKind]: ApprovalRequestKind } = {
  execute: "command",
  edit: "file-change",
  delete: "file-change",
  move: "file-change",
  read: "file-read",
  search: "file-read",
  think: "permission",
  fetch: "permission",
  switch_mode: "permission",
  other: "permission",
};

/**
 * Tool kinds Loom approves by itself in `auto-accept-edits`: edits and the
 * read-only kinds. `full-access` approves everything; `approval-required`
 * asks the owner about everything the agent asks about.
 */
const AUTO_ACCEPTED_WITH_EDITS: ReadonlySet<ToolKind> = new Set(["edit", "delete", "move", "read", "search", "think"]);

export function approvesByItself(runtimeMode: RuntimeMode, kind: ToolKind | null | undefined): boolean {
  switch (runtimeMode) {
    case "full-access":
      return true;
    case "auto-accept-edits":
      return kind != null && AUTO_ACCEPTED_WITH_EDITS.has(kind);
    case "approval-required":
      return false;
    default: {
      const unexpected: never = runtimeMode;
      throw new Error(`unexpected runtime mode ${String(unexpected)}`);
    }
  }
}

/** The approval item for a permission request. */
export function approvalItem(requestId: string, request: RequestPermissionRequest, known: { readonly title: string; readonly kind: ToolKind | null; readonly rawInput: unknown } | null): ApprovalRequestItem {
  const kind = request.toolCall.kind ?? known?.kind ?? "other";
  const title = request.toolCall.title ?? known?.title ?? "Allow a tool call";
  const rawInput = request.toolCall.rawInput ?? known?.rawInput;
  const details = [
    describeInput(rawInput),
    ...(request.toolCall.locations ?? []).map((location) => location.path),
    `options: ${request.options.map((option) => option.name).join(", ")}`,
  ];
  return { kind: "approval_request", requestId, requestKind: APPROVAL_KIND_OF_TOOL[kind], title, detail: details.filter((part) => part !== "").join("\n") };
}

function describeInput(rawInput: unknown): string {
  if (rawInput === undefined || rawInput === null) return "";
  if (typeof rawInput === "string") return rawInput;
  const command = (rawInput as { command?: unknown }).command;
  if (typeof command === "string") return command;
  const text = JSON.stringify(rawInput);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** The answer that lets the call run, for a request Loom approves by itself. */
export function allowOutcome(options: readonly PermissionOption[]): RequestPermissionResponse {
  return pick(options, ["allow_once", "allow_always"]);
}

const LoomDecisionSchema = z.union([
  z.object({ decision: z.enum(["accept", "accept_for_session", "acceptForSession", "decline", "cancel"]) }),
  z.object({ dismissed: z.literal(true) }),
]);

/** The agent's answer for Loom's response; ProviderError protocol_error for a response of another shape. */
export function permissionOutcome(requestId: string, options: readonly PermissionOption[], response: unknown): RequestPermissionResponse {
  const parsed = LoomDecisionSchema.safeParse(response);
  if (!parsed.success) {
    throw new ProviderError(ProviderErrorCode.protocol, `request ${requestId} is an approval: respond with { decision } or { dismissed: true }`);
  }
  if ("dismissed" in parsed.data) return CANCELLED;
  switch (parsed.data.decision) {
    case "accept":
      return pick(options, ["allow_once", "allow_always"]);
    case "accept_for_session":
    case "acceptForSession":
      return pick(options, ["allow_always", "allow_once"]);
    case "decline":
      return pick(options, ["reject_once", "reject_always"]);
    case "cancel":
      return CANCELLED;
    default: {
      const unexpected: never = parsed.data.decision;
      throw new Error(`unexpected decision ${String(unexpected)}`);
    }
  }
}

export const CANCELLED: RequestPermissionResponse = { outcome: { outcome: "cancelled" } };

/** The first option of the first kind present; "cancelled" when the agent offered none of them. */
function pick(options: readonly PermissionOption[], kinds: readonly PermissionOptionKind[]): RequestPermissionResponse {
  for (const kind of kinds) {
    const option = options.find((candidate) => candidate.kind === kind);
    if (option !== undefined) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return CANCELLED;
}
