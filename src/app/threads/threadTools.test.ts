import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnItem } from "../../contracts/turnItems.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * An agent calling Loom's thread tools through its own injected credential:
 * the scripted agent is a real MCP client, and the test reads Loom's state.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({
    config: {
      projects: [
        { id: "default", root: "." },
        { id: "other", root: "." },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
});

type DynamicTool = Extract<TurnItem, { type: "dynamic_tool" }>;
interface ListedThread {
  threadId: string;
  title: string;
  projectId: string;
}

function toolItems(threadId: string): DynamicTool[] {
  return h.items(threadId).filter((item): item is DynamicTool => item.type === "dynamic_tool");
}

function structured(item: DynamicTool): Record<string, unknown> {
  return (item.result as { structuredContent: Record<string, unknown> }).structuredContent;
}

describe("thread tools called by a scripted agent", () => {
  it("lists its own project, reads itself and another project's threads, and quotes the results", async () => {
    const elsewhere = await h.launch({ message: "hello other", projectId: "other", title: "Elsewhere" });
    expect((await h.waitForEnd(elsewhere.runId!)).status).toBe("completed");
    const sibling = await h.createThread({ title: "Sibling" });

    const lister = await h.createThread({
      title: "Lister",
      prompt: script(
        { call: "t3_thread_list", as: "list" },
        { call: "t3_thread_read", args: { threadId: "{{list.threads.0.threadId}}" }, as: "self" },
        { call: "t3_thread_list", args: { projectId: "other" }, as: "other" },
        { call: "t3_thread_read", args: { threadId: "{{other.threads.0.threadId}}", view: "messages" }, as: "far" },
        { say: "{{list.projectId}} has {{list.total}} threads; I am {{self.thread.title}} ({{self.thread.status}})" },
        { say: "other has {{other.total}}: {{other.threads.0.title}} said {{far.items.1.text}}" },
      ),
    });
    const run = await h.waitForEnd(lister.runId!);
    expect(run.status).toBe("completed");

    const tools = toolItems(lister.threadId);
    expect(tools.map((item) => [item.toolName, item.status])).toEqual([
      ["t3_thread_list", "completed"],
      ["t3_thread_read", "completed"],
      ["t3_thread_list", "completed"],
      ["t3_thread_read", "completed"],
    ]);
    expect(tools.every((item) => item.runId === run.id)).toBe(true);

    // Without projectId a thread caller lists its own project only, newest first.
    const list = structured(tools[0]!) as { projectId: string; total: number; threads: ListedThread[] };
    expect(list.projectId).toBe("default");
    expect(list.threads.map((t) => t.threadId)).toEqual([lister.threadId, sibling.threadId]);
    expect(list.threads.some((t) => t.threadId === elsewhere.threadId)).toBe(false);
    const other = structured(tools[2]!) as { threads: ListedThread[] };
    expect(other.threads.map((t) => t.threadId)).toEqual([elsewhere.threadId]);

    expect(h.assistantTexts(lister.threadId)).toEqual([
      "default has 2 threads; I am Lister (running)",
      "other has 1: Elsewhere said Echo: hello other",
    ]);
  });

  it("records a failed tool answer as a failed item the script can branch on", async () => {
    const thread = await h.createThread({
      title: "Misses",
      prompt: script({ call: "t3_thread_read", args: { threadId: "thread:does-not-exist" }, as: "miss" }, { say: "code={{miss.error.code}}" }),
    });
    expect((await h.waitForEnd(thread.runId!)).status).toBe("completed");
    const [item] = toolItems(thread.threadId);
    expect(item?.status).toBe("failed");
    expect(h.assistantTexts(thread.threadId)).toEqual(["code=thread_not_found"]);
  });

  it("shows the agent's tool activity to an outside reader in the activity view", async () => {
    const thread = await h.createThread({ title: "Visible", prompt: script({ call: "t3_thread_list", args: { limit: 1 }, as: "l" }, { say: "first is {{l.threads.0.title}}" }) });
    await h.waitForEnd(thread.runId!);
    const read = await h.owner.ok<{ items: { type: string; status?: string; text: string }[]; runs: { status: string }[] }>("t3_thread_read", {
      threadId: thread.threadId,
      view: "activity",
    });
    expect(read.items.map((item) => item.type)).toEqual(["user_message", "dynamic_tool", "assistant_message"]);
    expect(read.items[1]).toMatchObject({ status: "completed" });
    expect(read.items[1]!.text).toMatch(/^t3_thread_list\(\{"limit":1\}\)/);
    expect(read.items[2]!.text).toBe("first is Visible");
    expect(read.runs.map((r) => r.status)).toEqual(["completed"]);
    const messages = await h.owner.ok<{ items: { type: string }[] }>("t3_thread_read", { threadId: thread.threadId });
    expect(messages.items.map((item) => item.type)).toEqual(["user_message", "assistant_message"]);
  });
});
