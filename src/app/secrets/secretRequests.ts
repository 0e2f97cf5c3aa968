import type { TurnItemOf } from "../../contracts/turnItems.js";
import type { RequestSecretInput, SecretRequestOutput, SupplySecretInput } from "../../contracts/tools/secretTools.js";
import { joinId } from "../../core/ids.js";
import type { SecretVault } from "../../providers/secretVault.js";
import { type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { AppError, fail } from "../errors.js";
import { liveThreadOrFail } from "../threads/authorize.js";

/** Where owner-supplied secrets go: the vault the session manager reads, and which sessions are open. */
export interface SecretDelivery {
  readonly vault: SecretVault;
  isSessionLive(providerSessionId: string): boolean;
}

/**
 * Variables a secret may not be delivered as: they steer the shell, the
 * dynamic linker or the runtimes an agent's commands start, so setting one
 * would change what runs rather than hand it a value.
 */
const RESERVED_ENV_VARS: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "SHELL",
  "USER",
  "LOGNAME",
  "PWD",
  "OLDPWD",
  "TMPDIR",
  "IFS",
  "ENV",
  "BASH_ENV",
  "PS4",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  "NODE_OPTIONS",
  "PYTHONPATH",
  "PYTHONSTARTUP",
]);
const RESERVED_PREFIXES = ["LD_", "DYLD_", "LOOM_"];

export function isReservedEnvVar(name: string): boolean {
  return RESERVED_ENV_VARS.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

type SecretRequestItem = TurnItemOf<"secret_request">;

function view(item: SecretRequestItem): SecretRequestOutput {
  return { requestId: item.id, threadId: item.threadId, secretName: item.secretName, envVarName: item.envVarName, status: item.status };
}

/**
 * request_secret: an agent asks the owner for a named secret. A
 * secret_request item opens on its running turn; the owner answers with
 * supplySecret (the HTTP route, later the UI). The value reaches only the
 * requesting provider session, as an environment variable of the turns it
 * starts afterwards; it never enters the event log, a projection or a log.
 */
export async function requestSecret(ctx: AppContext, caller: Caller, input: RequestSecretInput): Promise<SecretRequestOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "request_secret");
  if (caller.kind !== "agent" || acting.thread === null) fail("capability_denied", "request_secret is for an agent working in a thread; the owner supplies secrets");
  const session = ctx.orchestrator.state.providerSessions.get(caller.providerSessionId);
  if (acting.activeRun === null || session === undefined || session.releasedAt !== null || session.threadId !== acting.thread.id) {
    fail("parent_not_active", `thread ${acting.thread.id} has no active run owned by this provider session`);
  }
  if (isReservedEnvVar(input.envVarName)) fail("invalid_request", `${input.envVarName} is a system variable; choose a name of your own, like MY_SERVICE_TOKEN`);
  const provider = acting.activeRun.providerInstanceId === null ? null : await ctx.registry.get(acting.activeRun.providerInstanceId);
  if (provider?.capabilities?.turnEnvironment !== true) {
    fail("invalid_request", `provider instance ${acting.activeRun.providerInstanceId ?? "?"} cannot pass secrets to the commands its agent runs`);
  }
  const requestId = joinId("secret-request", freshUuid(ctx));
  const executed = await execute(ctx, {
    type: "secret_request.record",
    commandId: joinId("cmd", "request_secret", requestId),
    data: {
      threadId: acting.thread.id,
      requestId,
      runId: acting.activeRun.id,
      providerSessionId: caller.providerSessionId,
      secretName: input.secretName,
      envVarName: input.envVarName,
      description: input.description ?? null,
      status: "pending",
    },
  });
  const item = executed.events.map((event) => (event.data as { item?: SecretRequestItem }).item).find((candidate) => candidate?.id === requestId);
  return item === undefined ? fail("orchestration_error", `secret request ${requestId} was not recorded`) : view(item);
}

/** A thread's secret request, or invalid_request. */
function secretRequest(ctx: AppContext, threadId: string, requestId: string): SecretRequestItem {
  liveThreadOrFail(ctx, threadId);
  const found = ctx.orchestrator.timeline.items(threadId, { types: ["secret_request"] }).find((item) => item.id === requestId);
  if (found?.type !== "secret_request") fail("invalid_request", `thread ${threadId} has no secret request ${requestId}`);
  return found;
}

async function record(ctx: AppContext, item: SecretRequestItem, status: "provided" | "declined" | "cancelled"): Promise<void> {
  await execute(ctx, {
    type: "secret_request.record",
    commandId: joinId("cmd", "secret", item.id, status),
    data: { threadId: item.threadId, requestId: item.id, secretName: item.secretName, envVarName: item.envVarName, description: item.description, status },
  });
}

/**
 * The owner supplies (or declines) a requested secret. The value goes to the
 * requesting session's environment only, never into a command, an event, a
 * log line or an error message; the request item records `provided`, and the
 * agent gets a follow-up turn that says so. When the requesting session has
 * ended, nothing can receive the value: the request is cancelled and the
 * call refused.
 */
export async function supplySecret(ctx: AppContext, caller: Caller, input: SupplySecretInput): Promise<SecretRequestOutput> {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner supplies secrets");
  const item = secretRequest(ctx, input.threadId, input.requestId);
  if (item.status !== "pending") fail("invalid_request", `secret request ${item.id} is already ${item.status}`);
  if (input.value === undefined) {
    await record(ctx, item, "declined");
    return { ...view(item), status: "declined" };
  }
  const sessionId = item.providerSessionId ?? null;
  if (sessionId === null || !ctx.secrets.isSessionLive(sessionId)) {
    await record(ctx, item, "cancelled");
    fail("invalid_request", `the session that asked for secret request ${item.id} has ended, so nothing can receive the value; the request is cancelled and the agent may ask again`);
  }
  // In the vault before the record commits: the follow-up turn it starts must find it.
  ctx.secrets.vault.put(sessionId, item.envVarName, input.value);
  try {
    await record(ctx, item, "provided");
  } catch (error) {
    ctx.secrets.vault.remove(sessionId, item.envVarName);
    // Whatever went wrong, the message must not carry the value: report the request only.
    if (error instanceof AppError) throw new AppError(error.code, `secret request ${item.id} could not be recorded: ${error.rejectionCode ?? error.code}`);
    throw new AppError("orchestration_error", `secret request ${item.id} could not be recorded`);
  }
  return { ...view(item), status: "provided" };
}

/** The thread's secret requests (for the owner and the UI): names and status, never values. */
export function listSecretRequests(ctx: AppContext, caller: Caller, threadId: string): SecretRequestOutput[] {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner lists secret requests");
  liveThreadOrFail(ctx, threadId);
  return ctx.orchestrator.timeline.items(threadId, { types: ["secret_request"] }).flatMap((item) => (item.type === "secret_request" ? [view(item)] : []));
}
