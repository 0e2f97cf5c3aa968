import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";
import { childScript, toolResults } from "../../testkit/delegationHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * agent()'s isolation option with real git: each agent() child with
 * `isolation: "worktree"` works in a git worktree of its own, branched from
 * the parent's workspace, so parallel agents writing the same path never
 * touch each other's files or the parent's checkout.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

describe("agent() isolation worktree", () => {
  it("parallel agents write the same path in worktrees of their own", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const child = (n: number) => childScript({ write: { path: "shared.txt", content: `from agent ${n}\n` } }, { say: `agent ${n} wrote` });
    const workflow = `return await parallel([1, 2].map((n) => () => agent(n === 1 ? ${JSON.stringify(child(1))} : ${JSON.stringify(child(2))}, { label: "agent " + n, isolation: "worktree" })));`;
    const parent = await h.launch({ projectId: "repo", message: script({ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 20_000, script: workflow }, as: "w" }, { say: "done" }) });
    await h.waitForEnd(parent.runId!, 30_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    expect(call!.result).toMatchObject({ status: "completed", result: ["agent 1 wrote", "agent 2 wrote"] });
    const paths = call!.result.steps.map((step) => h.state.threads.get(step.childThreadId!)!.worktreePath!);
    expect(new Set(paths).size).toBe(2);
    expect(paths).not.toContain(repo);
    expect(paths.map((path) => readFileSync(join(path, "shared.txt"), "utf8"))).toEqual(["from agent 1\n", "from agent 2\n"]);
    expect(existsSync(join(repo, "shared.txt"))).toBe(false);
  });

  it("fails the call with workspace_unavailable when the parent's workspace is not a git repository", async () => {
    env = await startRepoHarness({ plain: true });
    const { h } = env;
    const workflow = `try { await agent("hi", { isolation: "worktree" }); return "ran"; } catch (error) { return error.code; }`;
    const parent = await h.launch({ projectId: "repo", message: script({ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 20_000, script: workflow }, as: "w" }, { say: "done" }) });
    await h.waitForEnd(parent.runId!, 30_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    expect(call!.result).toMatchObject({ status: "completed", result: "workspace_unavailable" });
    expect([...h.state.tasks.values()].filter((task) => task.parentThreadId === parent.threadId)).toHaveLength(0);
  });
});
