import { z } from "zod";
import { isCommandType, isPublicCommandType } from "./commandTypes.js";
import { DELEGATION_COMMAND_SCHEMAS, type DelegationCommand } from "./commands/delegationCommands.js";
import { LINEAGE_COMMAND_SCHEMAS, type LineageCommand } from "./commands/lineageCommands.js";
import { RUN_COMMAND_SCHEMAS, type RunCommand } from "./commands/runCommands.js";
import type { RuntimeIngestCommand } from "./commands/runtimeCommands.js";
import { THREAD_COMMAND_SCHEMAS, type ThreadCommand } from "./commands/threadCommands.js";
import { NOTICE_COMMAND_SCHEMAS, type NoticeCommand } from "./commands/noticeCommands.js";
import { SECRET_COMMAND_SCHEMAS, type SecretCommand } from "./commands/secretCommands.js";
import type { WaitCommand } from "./commands/waitCommands.js";
import { WORKSPACE_COMMAND_SCHEMAS, type WorkspaceCommand } from "./commands/workspaceCommands.js";
import type { ScheduleCommand } from "./commands/scheduleCommands.js";
import { PULL_REQUEST_COMMAND_SCHEMAS, PULL_REQUEST_INTERNAL_COMMAND_SCHEMAS, type PullRequestCommand, type ThreadPullRequestWatchSyncCommand } from "./commands/pullRequestCommands.js";
import type { WorkflowCommand } from "./commands/workflowCommands.js";
import { formatZodIssues } from "./zodIssues.js";

/** Commands that outside clients may send (after validation). */
export type ClientCommand = ThreadCommand | RunCommand | DelegationCommand | LineageCommand | NoticeCommand | WorkspaceCommand | PullRequestCommand;
/** Spec 004's internal commands this build implements: only the server sends them (parseCommand refuses them from outside). */
export type InternalCommand = SecretCommand | ThreadPullRequestWatchSyncCommand;
/** Every command this build can decide, including the engine's runtime ingestion and recorded waits. */
export type Command = ClientCommand | InternalCommand | RuntimeIngestCommand | WaitCommand | ScheduleCommand | WorkflowCommand;

const SCHEMAS = [...THREAD_COMMAND_SCHEMAS, ...RUN_COMMAND_SCHEMAS, ...DELEGATION_COMMAND_SCHEMAS, ...LINEAGE_COMMAND_SCHEMAS, ...NOTICE_COMMAND_SCHEMAS, ...SECRET_COMMAND_SCHEMAS, ...WORKSPACE_COMMAND_SCHEMAS, ...PULL_REQUEST_COMMAND_SCHEMAS, ...PULL_REQUEST_INTERNAL_COMMAND_SCHEMAS] as const;
const CommandSchema = z.discriminatedUnion("type", SCHEMAS);
const implemented: ReadonlySet<string> = new Set(SCHEMAS.map((s) => s.shape.type.value));

export type CommandParseFailure =
  | { readonly code: "invalid_command"; readonly message: string }
  | { readonly code: "unknown_command_type"; readonly message: string }
  | { readonly code: "unsupported_command"; readonly message: string }
  | { readonly code: "internal_command"; readonly message: string };

export type CommandParseResult = { readonly ok: true; readonly command: ClientCommand | InternalCommand } | { readonly ok: false; readonly failure: CommandParseFailure };

/** The command types this build accepts from a caller, sorted: an unknown type's error lists them. */
export function acceptedTypes(allowInternal: boolean): string[] {
  return [...implemented].filter((type) => allowInternal || isPublicCommandType(type)).sort();
}

/**
 * Validate a command. Nothing is written for a failure. Outside clients pass
 * `allowInternal: false`: internal commands come only from the engine.
 */
export function parseCommand(raw: unknown, options: { readonly allowInternal: boolean } = { allowInternal: true }): CommandParseResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, failure: { code: "invalid_command", message: "a command must be a JSON object { type, commandId, data }" } };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== "string") {
    return { ok: false, failure: { code: "invalid_command", message: 'missing string field "type"' } };
  }
  if (!isCommandType(type)) {
    return { ok: false, failure: { code: "unknown_command_type", message: `unknown command type "${type}"; valid types: ${acceptedTypes(options.allowInternal).join(", ")}` } };
  }
  if (!options.allowInternal && !isPublicCommandType(type)) {
    return { ok: false, failure: { code: "internal_command", message: `command type "${type}" is internal to the server` } };
  }
  if (!options.allowInternal && "clientRequest" in raw) {
    return { ok: false, failure: { code: "invalid_command", message: "clientRequest is set by the server's tools, not by clients" } };
  }
  if (!implemented.has(type)) {
    return { ok: false, failure: { code: "unsupported_command", message: `command type "${type}" is not supported by this server` } };
  }
  const parsed = CommandSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, failure: { code: "invalid_command", message: `invalid ${type}: ${formatZodIssues(parsed.error)}` } };
  }
  return { ok: true, command: parsed.data };
}
