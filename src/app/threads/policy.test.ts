import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * The privilege ceiling and the live-run rule (spec 000, Policy And
 * Idempotency), exercised by scripted agents through their own credentials.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

function titles(): string[] {
  return [...h.state.threads.values()].map((t) => t.title).sort();
}

describe("privilege ceiling", () => {
  it("refuses a broader runtime mode for new and existing threads from an approval-required agent", async () => {
    const wide = await h.createThread({ title: "Wide open" });
    expect(h.state.threads.get(wide.threadId)!.runtimeMode).toBe("full-access");
    const parent = await h.launch({
      title: "Careful",
      runtimeMode: "approval-required",
      message: script(
        { call: "t3_thread_launch", args: { message: "escalate", runtimeMode: "full-access" }, as: "launch" },
        { call: "create_threads", args: { threads: [{ prompt: "batch escalate", runtimeMode: "auto-accept-edits" }] }, as: "batch" },
        { call: "t3_thread_list", args: { title: "Wide open" }, as: "found" },
        { call: "t3_thread_send", args: { threadId: "{{found.threads.0.threadId}}", message: "poke" }, as: "poke" },
        { call: "t3_thread_launch", args: { message: "same level", title: "Narrow child" }, as: "ok" },
        { say: "launch={{launch.error.code}} batch={{batch.error.code}} poke={{poke.error.code}} ok={{ok.runtimeMode}}" },
      ),
    });
    expect(h.state.threads.get(parent.threadId)!.runtimeMode).toBe("approval-required");
    expect((await h.waitForEnd(parent.runId!)).status).toBe("completed");
    expect(h.assistantTexts(parent.threadId)).toEqual([
      "launch=runtime_mode_escalation_denied batch=runtime_mode_escalation_denied poke=runtime_mode_escalation_denied ok=approval-required",
    ]);
    const calls = h.items(parent.threadId).flatMap((item) => (item.type === "dynamic_tool" ? [[item.toolName, item.status]] : []));
    expect(calls).toEqual([
      ["t3_thread_launch", "failed"],
      ["create_threads", "failed"],
      ["t3_thread_list", "completed"],
      ["t3_thread_send", "failed"],
      ["t3_thread_launch", "completed"],
    ]);
    // Only the inheriting child was created, and the broader thread got no message.
    expect(titles()).toEqual(["Careful", "Narrow child", "Wide open"]);
    expect(h.runs(wide.threadId)).toEqual([]);
    const child = [...h.state.threads.values()].find((t) => t.title === "Narrow child")!;
    expect(child).toMatchObject({ runtimeMode: "approval-required", createdBy: "agent", creationSource: "mcp" });
  });

  it("refuses to widen interaction mode plan to default", async () => {
    const before = h.state.threads.size;
    const parent = await h.launch({
      title: "Planner",
      interactionMode: "plan",
      message: script(
        { call: "create_threads", args: { threads: [{ title: "Wider", interactionMode: "default" }] }, as: "wide" },
        { call: "t3_thread_launch", args: { message: "wider launch", interactionMode: "default" }, as: "launch" },
        { call: "create_threads", args: { threads: [{ title: "Same plan" }] }, as: "same" },
        { say: "wide={{wide.error.code}} launch={{launch.error.code}} same={{same.threads.0.interactionMode}}" },
      ),
    });
    expect((await h.waitForEnd(parent.runId!)).status).toBe("completed");
    expect(h.assistantTexts(parent.threadId)).toEqual(["wide=interaction_mode_escalation_denied launch=interaction_mode_escalation_denied same=plan"]);
    expect(h.state.threads.size).toBe(before + 2);
    expect(titles()).not.toContain("Wider");
  });
});

describe("a thread caller without a live run", () => {
  it("may read any thread but change none, its own included", async () => {
    const self = await h.createThread({ title: "Idle caller" });
    const target = await h.createThread({ title: "Target" });
    const credential = await h.server.credentials.issue({
      environmentId: h.server.environmentId,
      threadId: self.threadId,
      providerInstanceId: "scripted",
      providerSessionId: "provider-session:idle-caller",
    });
    const agent = await h.connect(credential.token, "idle-caller");
    const before = h.state.lastSequence;

    const denied = [
      await agent.call("t3_thread_send", { threadId: target.threadId, message: "hello" }),
      await agent.call("t3_thread_update", { threadId: target.threadId, action: "rename", title: "Hijacked" }),
      await agent.call("t3_thread_interrupt", { threadId: target.threadId }),
      await agent.call("link_pull_request", { threadId: target.threadId, url: "https://example.com/pr/1" }),
      await agent.call("t3_thread_update", { action: "rename", title: "Renamed myself" }),
    ];
    expect(denied.map((outcome) => outcome.errorCode)).toEqual(["parent_not_active", "parent_not_active", "parent_not_active", "parent_not_active", "parent_not_active"]);
    expect(h.state.lastSequence).toBe(before);
    expect(h.state.threads.get(target.threadId)!.title).toBe("Target");
    expect(h.state.threads.get(self.threadId)!.title).toBe("Idle caller");

    const read = await agent.ok<{ thread: { threadId: string; title: string } }>("t3_thread_read", { threadId: target.threadId });
    expect(read.thread).toMatchObject({ threadId: target.threadId, title: "Target" });
  });

  it("refuses orchestration tools to a credential without the orchestration capability", async () => {
    const { threadId } = await h.createThread({ title: "Preview only" });
    const credential = await h.server.credentials.issue(
      { environmentId: h.server.environmentId, threadId, providerInstanceId: "scripted", providerSessionId: "provider-session:preview" },
      { capabilities: ["preview"] },
    );
    const agent = await h.connect(credential.token, "preview-only");
    const outcome = await agent.call("t3_thread_list");
    expect(outcome).toMatchObject({ isError: true, errorCode: "capability_denied" });
  });
});

describe("workspace scope of t3_thread_launch", () => {
  it("lets an agent bind a new thread only to a checkout inside its project or its own workspace; the owner may bind any", async () => {
    // Launching is a write: the launcher needs a live run for its credential to act.
    const self = await h.createThread({ title: "Launcher", prompt: script({ sleep: 60_000 }) });
    await h.waitForRun(self.runId!, "running");
    const credential = await h.server.credentials.issue({
      environmentId: h.server.environmentId,
      threadId: self.threadId,
      providerInstanceId: "scripted",
      providerSessionId: "provider-session:launcher",
    });
    const agent = await h.connect(credential.token, "launcher");
    const inside = join(h.dir, "checkouts", "feature");
    mkdirSync(inside, { recursive: true });
    const outside = mkdtempSync(join(tmpdir(), "loom-elsewhere-"));
    const before = h.state.threads.size;

    const denied = await agent.call("t3_thread_launch", { message: "hi", workspaceStrategy: "existing_worktree", worktreePath: outside });
    expect(denied.errorCode).toBe("invalid_request");
    expect(denied.structured).toMatchObject({ error: { message: expect.stringContaining("outside project") } });
    expect(h.state.threads.size).toBe(before);

    const allowed = await agent.ok<{ threadId: string; worktreePath: string }>("t3_thread_launch", { message: "hi", workspaceStrategy: "existing_worktree", worktreePath: inside });
    expect(allowed.worktreePath).toBe(inside);
    const byOwner = await h.owner.ok<{ worktreePath: string }>("t3_thread_launch", { message: "hi", workspaceStrategy: "existing_worktree", worktreePath: outside });
    expect(byOwner.worktreePath).toBe(outside);
    rmSync(outside, { recursive: true, force: true });
    await h.owner.ok("t3_thread_interrupt", { threadId: self.threadId });
    await h.waitForEnd(self.runId!);
  });
});
