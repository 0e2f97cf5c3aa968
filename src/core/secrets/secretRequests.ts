import type { SecretRequestRecordCommand } from "../../contracts/commands/secretCommands.js";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import { Changes } from "../run/changes.js";
import { activeRun } from "../run/lifecycle.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";

type SecretRequestItem = TurnItemOf<"secret_request">;

function secretRequestItem(changes: Changes, threadId: string, requestId: string): SecretRequestItem | undefined {
  const item = changes.existingItem(requestId);
  return item?.type === "secret_request" && item.threadId === threadId ? item : undefined;
}

function outcomeNotice(item: SecretRequestItem, status: "provided" | "declined"): { title: string; text: string } {
  if (status === "provided") {
    return {
      title: `Secret provided: ${item.secretName}`,
      text: [
        `The owner provided the secret "${item.secretName}".`,
        `It is in the environment variable ${item.envVarName} of the commands you run from this turn on, in this session only.`,
        "Use it by name; never print it or write it into files, messages or tool arguments.",
      ].join(" "),
    };
  }
  return { title: `Secret declined: ${item.secretName}`, text: `The owner declined to provide the secret "${item.secretName}" (${item.envVarName}). Go on without it, or explain what you need it for.` };
}

/**
 * secret_request.record (internal): open a secret_request item (`pending`)
 * on the run that asked, or record what became of it. `provided` and
 * `declined` tell the agent with a notification that starts a follow-up turn
 * (queued behind a running one, never steered: a turn's environment is set
 * when it starts). The value is never part of this command.
 */
export function decideSecretRequestRecord(state: OrchestrationState, command: SecretRequestRecordCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const changes = new Changes(state, ctx);
  const { requestId, status } = command.data;
  const existing = secretRequestItem(changes, thread.id, requestId);
  if (status === "pending") {
    if (changes.existingItem(requestId) !== undefined) return reject(RejectionCode.secretRequestNotPending, `secret request ${requestId} was already recorded`);
    let runId: string | null = activeRun(changes, thread.id)?.id ?? null;
    if (command.data.runId !== undefined) {
      const run = changes.run(command.data.runId);
      if (run === undefined || run.threadId !== thread.id) return reject(RejectionCode.runNotFound, `run ${command.data.runId} does not exist in thread ${thread.id}`);
      runId = run.id;
    }
    changes.addItem(
      thread.id,
      runId,
      {
        type: "secret_request",
        secretName: command.data.secretName,
        envVarName: command.data.envVarName,
        description: command.data.description,
        status: "pending",
        providerSessionId: command.data.providerSessionId ?? null,
      },
      requestId,
    );
    return changes.done();
  }
  if (existing === undefined) return reject(RejectionCode.secretRequestNotFound, `thread ${thread.id} has no secret request ${requestId}`);
  if (existing.status !== "pending") return reject(RejectionCode.secretRequestNotPending, `secret request ${requestId} is already ${existing.status}`);
  const updated = changes.updateItem(existing, { status });
  if (status === "provided" || status === "declined") deliverNotice(changes, thread.id, { ...outcomeNotice(updated, status), sourceThreadId: null }, { allowSteer: false });
  return changes.done();
}
