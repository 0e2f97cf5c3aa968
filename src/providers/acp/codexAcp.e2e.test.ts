import { afterEach, beforeEach, describe, it } from "vitest";
import { type AcpAgentHarness, startAcpAgentHarness } from "../../testkit/acpRealAgents.js";
import { TURN_MS, agentAnswersAsDelegatedChild, agentDelegatesToScriptedChild, approvalRoutedThroughLoom } from "../../testkit/acpAgentScenarios.js";

/**
 * Codex ACP 0.16.0 (@zed-industries/codex-acp) under Loom's generic `acp` driver, against the scripted model
 * server (OpenAI Responses). Judged from Loom's state (testkit/acpAgentScenarios.ts).
 */

let h: AcpAgentHarness;

beforeEach(async () => {
  h = await startAcpAgentHarness("codex-acp");
});

afterEach(async () => {
  await h.close();
});

describe("codex-acp end to end", () => {
  it("calls Loom's delegate_task; the scripted child's answer comes back", () => agentDelegatesToScriptedChild(h, "codex-acp"), TURN_MS * 3);

  it("answers a task as the delegated child of a scripted parent", () => agentAnswersAsDelegatedChild(h, "codex-acp"), TURN_MS * 3);

  it("a shell command waits for approval through Loom, the owner accepts, it runs", () => approvalRoutedThroughLoom(h, "codex-acp", { tool: "exec_command", arguments: { cmd: "touch approved.txt", sandbox_permissions: "require_escalated", justification: "create the file" } }), TURN_MS * 2);
});
