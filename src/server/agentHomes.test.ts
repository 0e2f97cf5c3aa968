import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { agentHomeName, forgetAgentHomes } from "./agentHomes.js";

/**
 * A deleted thread's agent never resumes, so its agent home (the agent's own
 * conversation under `<state-dir>/agents/`) is removed with its session;
 * other threads keep theirs.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

/** A finished thread whose agent session is still open, and its home (made here if the driver kept nothing in it). */
async function threadWithHome(text: string) {
  const { threadId, runId } = (await h.launch({ title: text, message: script({ say: text }) })) as { threadId: string; runId: string };
  await h.waitForEnd(runId);
  const session = [...h.state.providerSessions.values()].find((candidate) => candidate.threadId === threadId && candidate.releasedAt === null)!;
  const home = join(h.dir, ".loom", "agents", session.providerInstanceId, agentHomeName(threadId));
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "conversation.json"), "{}");
  return { threadId, session, home };
}

describe("agent homes", () => {
  it("a deleted thread's session is released at once and its home removed; another thread keeps its home", async () => {
    const kept = await threadWithHome("kept");
    const deleted = await threadWithHome("deleted");
    expect((await h.dispatch("thread.delete", { threadId: deleted.threadId })).status).toBe(200);

    const released = await h.until(() => {
      const session = h.state.providerSessions.get(deleted.session.id);
      return session?.releasedAt != null && !existsSync(deleted.home) ? session : null;
    }, "the deleted thread's session released and its home removed");
    expect(released.releaseReason).toBe("thread_deleted");
    expect(existsSync(kept.home)).toBe(true);
    expect(h.state.providerSessions.get(kept.session.id)?.releasedAt).toBeNull();
  });

  it("removes the link a warm session's path left to the home, and only that link", async () => {
    const agents = mkdtempSync(join(tmpdir(), "loom-agent-homes-"));
    try {
      const instance = join(agents, "codex");
      const home = join(instance, agentHomeName("thread:a"));
      const other = join(instance, agentHomeName("thread:b"));
      mkdirSync(home, { recursive: true });
      mkdirSync(other, { recursive: true });
      symlinkSync(home, join(instance, ".warm-aaaa1111"));
      symlinkSync(other, join(instance, ".warm-bbbb2222"));
      await forgetAgentHomes(agents, "thread:a");
      expect(existsSync(home)).toBe(false);
      expect(() => lstatSync(join(instance, ".warm-aaaa1111"))).toThrow(/ENOENT/);
      expect(lstatSync(join(instance, ".warm-bbbb2222")).isSymbolicLink()).toBe(true);
      expect(existsSync(other)).toBe(true);
    } finally {
      rmSync(agents, { recursive: true, force: true });
    }
  });
});
