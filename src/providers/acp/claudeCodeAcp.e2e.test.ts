import { afterEach, beforeEach, describe, it } from "vitest";
import { type AcpAgentHarness, startAcpAgentHarness } from "../../testkit/acpRealAgents.js";
import { TURN_MS, agentAnswersAsDelegatedChild, agentDelegatesToScriptedChild, approvalRoutedThroughLoom } from "../../testkit/acpAgentScenarios.js";

/**
 * Claude Code ACP 0.16.2 (@zed-industries/claude-code-acp) under Loom's generic `acp` driver, against the scripted model
 * server (Anthropic Messages). Judged from Loom's state (testkit/acpAgentScenarios.ts).
 */

let h: AcpAgentHarness;

beforeEach(async () => {
  h = await startAcpAgentHarness("claude-code-acp");
});

afterEach(async () => {
  await h.close();
});

describe("claude-code-acp end to end", () => {
  it("calls Loom's delegate_task; the scripted child's answer comes back", () => agentDelegatesToScriptedChild(h, "claude-code-acp"), TURN_MS * 3);

  it("answers a task as the delegated child of a scripted parent", () => agentAnswersAsDelegatedChild(h, "claude-code-acp"), TURN_MS * 3);

  it("a shell command waits for approval through Loom, the owner accepts, it runs", () => approvalRoutedThroughLoom(h, "claude-code-acp", { tool: "Bash", arguments: { command: "touch approved.txt", description: "create the file" } }), TURN_MS * 2);
});
