import { afterEach, beforeEach, describe, it } from "vitest";
import { type AcpAgentHarness, startAcpAgentHarness } from "../../testkit/acpRealAgents.js";
import { TURN_MS, agentAnswersAsDelegatedChild, agentDelegatesToScriptedChild, approvalRoutedThroughLoom } from "../../testkit/acpAgentScenarios.js";

/**
 * Gemini CLI 0.61.0 in ACP mode (--acp) under Loom's generic `acp`
 * driver, against the scripted model server (Gemini API). Judged from Loom's
 * state (testkit/acpAgentScenarios.ts).
 */

let h: AcpAgentHarness;

beforeEach(async () => {
  h = await startAcpAgentHarness("gemini");
});

afterEach(async () => {
  await h.close();
});

describe("gemini over ACP end to end", () => {
  it("calls Loom's delegate_task; the scripted child's answer comes back", () => agentDelegatesToScriptedChild(h, "gemini"), TURN_MS * 3);

  it("answers a task as the delegated child of a scripted parent", () => agentAnswersAsDelegatedChild(h, "gemini"), TURN_MS * 3);

  it("a shell command waits for approval through Loom, the owner accepts, it runs", () => approvalRoutedThroughLoom(h, "gemini", { tool: "run_shell_command", arguments: { command: "touch approved.txt", description: "create the file" } }), TURN_MS * 2);
});
