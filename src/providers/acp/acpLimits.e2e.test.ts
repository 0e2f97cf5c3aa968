import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { acpAgentInstance } from "../../testkit/acpRealAgents.js";
import { TURN_MS } from "../../testkit/acpAgentScenarios.js";
import { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * A usage limit met by a real ACP agent: Claude Code ACP under Loom's generic
 * `acp` driver, against the scripted model server, whose Anthropic API
 * answers with a plan limit and its reset time. The run stops on the limit,
 * the instance's failover list moves the work to the scripted instance with
 * the thread's context, and it completes there. Judged from Loom's state.
 */

let model: ModelServer;
let loom: LoomHarness;
let home: string;

beforeEach(async () => {
  model = await startModelServer();
  home = mkdtempSync(join(tmpdir(), "loom-acp-limits-home-"));
  loom = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted" }, { ...acpAgentInstance("claude-code-acp", model.url, home), failover: ["scripted"] }] } });
});

afterEach(async () => {
  await loom.close();
  await model.close();
  rmSync(home, { recursive: true, force: true });
});

describe("a usage limit met by claude-code-acp", () => {
  it(
    "stops the run, and its work moves to the failover instance with the thread's context and completes there",
    async () => {
      const resetAt = new Date(Date.now() + 3_600_000).toISOString();
      model.setRules([{ when: { api: "anthropic" }, reply: { fault: { status: 400, body: { type: "error", error: { type: "billing_error", message: `Usage limit reached for your plan; it resets at ${resetAt}.` } } } } }]);
      const launched = await loom.launch({ message: "Answer after the limit.", title: "acp limited", target: { providerInstanceId: "claude-code-acp" }, runtimeMode: "full-access" });
      const stopped = await loom.waitForEnd(launched.runId!, TURN_MS);
      const dumped = () => JSON.stringify({ runs: loom.runs(launched.threadId), items: loom.items(launched.threadId) }, null, 2);
      expect(stopped.status, dumped()).toBe("failed");
      const runs = await loom.until(() => (loom.runs(launched.threadId).length === 2 ? loom.runs(launched.threadId) : null), "the run on scripted", TURN_MS);
      expect(runs[1]).toMatchObject({ kind: "system_follow_up", providerInstanceId: "scripted" });
      expect((await loom.waitForEnd(runs[1]!.id, TURN_MS)).status, dumped()).toBe("completed");
      const items = loom.items(launched.threadId);
      const notices = items.flatMap((item) => (item.type === "system_notice" ? [item.text] : []));
      expect(notices, dumped()).toContainEqual(expect.stringMatching(/^usage limit reached \(resets at /));
      const moved = notices.find((text) => text.startsWith("Moved to scripted after claude-code-acp's usage limit"));
      expect(moved, dumped()).toBeDefined();
      expect(items.find((item) => item.type === "handoff")).toMatchObject({ fromProvider: "claude-code-acp", toProvider: "scripted", status: "ready" });
      expect(model.requests.some((request) => request.api === "anthropic" && request.status === 400)).toBe(true);
    },
    TURN_MS * 2 + 30_000,
  );
});
