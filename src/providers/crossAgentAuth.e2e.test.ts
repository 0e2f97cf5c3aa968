import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CredentialRejection } from "../mcp/credentialRegistry.js";
import { type AgentHarness, TURN_MS, dump, requireAgents, startAgentHarness, threads } from "../testkit/agentHarness.js";
import type { ModelRule } from "../modelServer/rules.js";

/**
 * A wrong or revoked session token, with the real CLIs: the agent's call to a
 * Loom tool fails and Loom records nothing on its behalf. The token is bent
 * by wrapping `credentials.issue` (what the session manager injects) or by
 * revoking the session's credential while the turn runs. Pass or fail is read
 * from Loom's state and the model server's log, never from a CLI's exit code.
 */

type Agent = "codex" | "claude";
const API = { codex: "responses", claude: "anthropic" } as const;
/** A shell call that keeps the turn busy while the test revokes the token. */
const NAP = {
  codex: { tool: "exec_command", arguments: { cmd: "sleep 1" } },
  claude: { tool: "Bash", arguments: { command: "sleep 1", description: "nap" } },
} as const;
const LAUNCH = { tool: "t3_thread_launch", arguments: { message: "You should not exist.", title: "hijack" } };
/** Loom's tool names as each agent offers them to the model. */
const LOOM_TOOL = /t3_thread_|delegate_task|create_threads|orchestrator_capabilities/;

let h: AgentHarness;
let rejections: CredentialRejection[];
/** Provider sessions Loom issued a credential for, in order. */
let issuedSessions: string[];

beforeEach(async () => {
  h = await startAgentHarness();
  rejections = [];
  issuedSessions = [];
  // Record every token Loom's MCP endpoint refuses (the 401s), keeping the real answers.
  const credentials = h.loom.server.credentials;
  const resolve = credentials.resolve.bind(credentials);
  vi.spyOn(credentials, "resolve").mockImplementation(async (token) => {
    const resolution = await resolve(token);
    if (!resolution.ok) rejections.push(resolution.reason);
    return resolution;
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

/** Wrap `issue`: record the session; with `wrongToken`, revoke the real credential and hand the agent a token Loom never issued. */
function wrapIssue(wrongToken: boolean): void {
  const credentials = h.loom.server.credentials;
  const issue = credentials.issue.bind(credentials);
  vi.spyOn(credentials, "issue").mockImplementation(async (scope, options) => {
    issuedSessions.push(scope.providerSessionId);
    const credential = await issue(scope, options);
    if (!wrongToken) return credential;
    await credentials.revokeSession(scope.providerSessionId);
    return { ...credential, token: `wrong-${crypto.randomUUID()}` };
  });
}

async function launchVictim(agent: Agent, rules: ModelRule[]) {
  await requireAgents(h.loom, [agent]);
  h.model.setRules(rules);
  expect(threads(h.loom)).toHaveLength(0);
  const launched = await h.loom.launch({ message: "Launch a thread.", title: "victim", target: { providerInstanceId: agent } });
  return { threadId: launched.threadId, runId: launched.runId! };
}

/** Nothing was created for the agent: the only thread and run are the owner's launch, and no Loom tool call succeeded. */
function expectNothingRecorded(threadId: string): void {
  const { loom } = h;
  expect(threads(loom).map((thread) => thread.title)).toEqual(["victim"]);
  expect(loom.state.runs.size).toBe(1);
  expect(loom.state.tasks.size).toBe(0);
  const succeeded = loom.items(threadId).filter((item) => item.type === "dynamic_tool" && item.status === "completed");
  expect(succeeded, dump(loom, threadId)).toEqual([]);
}

describe.each(["codex", "claude"] as const)("%s with a bad Loom token", (agent) => {
  it(
    "a wrong token injected at session start: Loom refuses it (401), the model never gets Loom's tools, nothing is created",
    async () => {
      wrapIssue(true);
      const { threadId, runId } = await launchVictim(agent, [
        { when: { api: API[agent], toolAvailable: LAUNCH.tool, lastIsToolResult: false }, reply: { toolCall: LAUNCH }, times: 1 },
        { when: { api: API[agent], requireTools: true }, reply: { text: "no Loom tools" } },
      ]);
      const run = await h.loom.waitForEnd(runId, TURN_MS);
      expect(run.status, dump(h.loom, threadId)).toBe("completed");
      expect(issuedSessions).toHaveLength(1);

      // The agent presented the wrong token and Loom's MCP endpoint refused it.
      expect(rejections.length).toBeGreaterThan(0);
      expect(new Set(rejections)).toEqual(new Set(["unknown"]));
      // So the model was never offered a Loom tool, and said so.
      const offered = h.model.requests.filter((request) => request.api === API[agent]).flatMap((request) => request.normalized?.tools ?? []);
      expect(offered.length).toBeGreaterThan(0);
      expect(offered.filter((tool) => LOOM_TOOL.test(tool))).toEqual([]);
      expect(h.loom.assistantTexts(threadId, runId)).toEqual(["no Loom tools"]);
      expectNothingRecorded(threadId);
      expect(h.loom.items(threadId).filter((item) => item.type === "dynamic_tool")).toEqual([]);
    },
    TURN_MS + 30_000,
  );

  it(
    "the token revoked mid-turn: the agent's t3_thread_launch call fails with Loom's 401 and nothing is created",
    async () => {
      wrapIssue(false);
      const { threadId, runId } = await launchVictim(agent, [
        // Loom's tools were listed with the good token; the model naps, the test revokes, then the model calls Loom.
        { when: { api: API[agent], toolAvailable: LAUNCH.tool, lastIsToolResult: false }, reply: { toolCall: NAP[agent] }, times: 1 },
        { when: { api: API[agent], toolAvailable: LAUNCH.tool, lastIsToolResult: true }, reply: { toolCall: LAUNCH }, times: 1 },
        { when: { api: API[agent], lastIsToolResult: true }, reply: { text: "launch said: {{lastToolResult}}" } },
      ]);
      await h.loom.until(() => h.model.requests.some((request) => request.ruleIndex === 0), `${agent} to take its nap`, TURN_MS);
      expect(issuedSessions).toHaveLength(1);
      expect(await h.loom.server.credentials.revokeSession(issuedSessions[0]!)).toBe(1);

      const run = await h.loom.waitForEnd(runId, TURN_MS);
      expect(run.status, dump(h.loom, threadId)).toBe("completed");
      // The model did call Loom's tool after the revocation...
      const calls = h.model.requests.flatMap((request) => (request.reply?.type === "toolCall" ? [request.reply.tool.name] : []));
      expect(calls).toHaveLength(2);
      expect(calls[1]).toMatch(/t3_thread_launch$/);
      // ...and the call failed on Loom's 401.
      expect(rejections).toContain("revoked");
      const tools = h.loom.items(threadId).filter((item) => item.type === "dynamic_tool");
      expect(tools, dump(h.loom, threadId)).toHaveLength(1);
      const failed = tools[0];
      if (failed?.type !== "dynamic_tool") throw new Error("no dynamic_tool item");
      expect(failed).toMatchObject({ toolName: expect.stringMatching(/t3_thread_launch$/), status: "failed" });
      // codex: "Authentication required" (with Loom's WWW-Authenticate); claude: "rejected the Authorization header".
      expect(JSON.stringify(failed.result)).toMatch(/Authentication required|rejected the Authorization header/);
      expect(h.loom.assistantTexts(threadId, runId).at(-1)).toMatch(/^launch said: /);
      expectNothingRecorded(threadId);
    },
    TURN_MS + 30_000,
  );
});
