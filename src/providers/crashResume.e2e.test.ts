import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionListResult } from "../app/sessions.js";
import { resumeNotice } from "../core/run/crashResume.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";
import { waitForExit } from "../testkit/loomProcess.js";
import { pollUntil } from "../testkit/poll.js";
import { type ServedLoom, ServeRig } from "../testkit/serveRig.js";

/**
 * kill -9 the built `loom serve` while a real agent's turn waits for the
 * approval of a shell command, on an instance with `onCrash: "resume"`
 * (docs/runs.md, "Work after a crash"); start it again on the same state
 * dir. The run starts again as its second attempt in the agent's own
 * conversation: a new `codex app-server` resumes the codex thread from the
 * CODEX_HOME Loom keeps for it; Claude Code resumes its session from the
 * config dir Loom keeps for the thread. So the model request of the resumed
 * turn carries the first attempt's message (no recap), then the
 * `<crash_resume>` brief, and the run completes. The approval the lost
 * process asked for expired.
 */

const TURN_MS = 90_000;
const MESSAGE = "Write the word PLUM-42 into plum.txt.";

interface ReadResult {
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text?: string; status?: string }[];
}

const AGENTS = [
  {
    driver: "codex",
    provider: (model: ModelServer) => ({
      id: "codex",
      driver: "codex",
      models: ["loom-test-model"],
      onCrash: "resume",
      options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
    }),
    toolCall: { tool: "exec_command", arguments: { cmd: "echo PLUM-42 > plum.txt" } },
  },
  {
    driver: "claude",
    provider: (model: ModelServer) => ({ id: "claude", driver: "claude", onCrash: "resume", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }),
    toolCall: { tool: "Bash", arguments: { command: "echo PLUM-42 > plum.txt", description: "write the word" } },
  },
] as const;

let dir: string;
let stateDir: string;
let rig: ServeRig;
let model: ModelServer;

async function setUp(agent: (typeof AGENTS)[number]): Promise<void> {
  model = await startModelServer();
  dir = mkdtempSync(join(tmpdir(), `loom-${agent.driver}-crash-resume-`));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, `${agent.driver}-crash-resume-test`);
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], providers: [agent.provider(model)] }));
}
afterEach(async () => {
  await rig.close();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
});

function read(served: ServedLoom, threadId: string): Promise<ReadResult> {
  return served.client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity", afterPosition: -1 });
}

describe.each(AGENTS)("$driver killed mid-turn with its server (onCrash resume)", (agent) => {
  it(
    "resumes the run as a second attempt in the agent's own conversation, with the crash brief, and completes",
    async () => {
      await setUp(agent);
      model.setRules([
        { when: { lastUserIncludes: "<crash_resume" }, reply: { text: "resumed where I stopped" } },
        { when: { lastIsToolResult: false }, reply: { toolCall: agent.toolCall }, times: 1 },
      ]);
      const first = await rig.start();
      const launched = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
        title: `${agent.driver} crash resume`,
        message: MESSAGE,
        target: { providerInstanceId: agent.driver },
        runtimeMode: "approval-required",
      });
      await pollUntil(
        () => read(first, launched.threadId),
        (r) => r.runs[0]?.status === "waiting_on_approval",
        "the codex turn to wait for approval",
        TURN_MS,
      );
      first.serve.child.kill("SIGKILL");
      expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");

      const second = await rig.start();
      expect(second.serve.stderr()).toContain("1 run(s) resumed, 0 run(s) interrupted");
      const done = await pollUntil(
        () => read(second, launched.threadId),
        (r) => r.runs[0]?.status !== "starting" && r.runs[0]?.status !== "running" && r.runs[0]?.status !== "waiting_on_approval",
        "the resumed run to end",
        TURN_MS,
      );
      expect(done.runs, JSON.stringify(done.items, null, 2)).toEqual([expect.objectContaining({ runId: launched.runId, status: "completed" })]);
      expect(done.items.filter((item) => item.type === "system_notice").map((item) => item.text)).toEqual([resumeNotice("server_restarted", 1)]);
      expect(done.items.filter((item) => item.type === "approval_request").map((item) => item.status)).toEqual(["expired"]);
      expect(done.items.filter((item) => item.type === "assistant_message").map((item) => item.text)).toEqual(["resumed where I stopped"]);

      // The resumed turn's model request: the agent's own conversation (the first attempt's message), then the brief; no recap.
      const resumed = model.requests.find((request) => request.normalized?.lastMessage?.text.includes("<crash_resume") === true)!.normalized!;
      const users = resumed.messages.filter((message) => message.role === "user").map((message) => message.text);
      expect(users.filter((text) => text.includes(MESSAGE)).length).toBeGreaterThanOrEqual(2);
      expect(users.findIndex((text) => text.includes(MESSAGE))).toBeLessThan(users.findIndex((text) => text.includes("<crash_resume")));
      expect(resumed.lastMessage!.text).toContain('<crash_resume reason="server_restarted" attempt="2">');
      expect(resumed.lastMessage!.text).not.toContain("<resume ");

      const sessions = (await (await fetch(`${second.serve.url}/api/sessions`, { headers: { authorization: `Bearer ${second.token}` } })).json()) as SessionListResult;
      expect(sessions.sessions.find((session) => session.threadId === launched.threadId)).toMatchObject({ resumed: true });
    },
    TURN_MS * 2 + 60_000,
  );
});
