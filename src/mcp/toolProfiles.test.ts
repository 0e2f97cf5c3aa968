import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoomToolsOutput } from "../contracts/tools/discoveryTools.js";
import { TOOL_CONTRACTS } from "../contracts/tools/toolContracts.js";
import { TOOL_LISTED_FROM } from "../contracts/tools/toolProfiles.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import type { LoomMcpClient } from "../testkit/mcpClient.js";

/**
 * Tool profiles over real MCP (docs/mcp.md, "Tool profiles"): a core
 * credential's tools/list is the core set plus loom_tools, it finds a tool
 * the listing leaves out and calls it, through loom_tools or by name; the
 * owner's and a full credential's listings are unchanged. A provider instance
 * with `toolProfile: "core"` gives its sessions core credentials.
 */

const CORE = Object.entries(TOOL_LISTED_FROM)
  .filter(([, profile]) => profile === "core")
  .map(([name]) => name)
  .sort();
const EVERY = Object.keys(TOOL_CONTRACTS)
  .filter((name) => name !== "loom_echo")
  .sort();

let h: LoomHarness;
let threadId: string;

beforeAll(async () => {
  h = await LoomHarness.start({
    config: {
      providers: [
        { id: "scripted", driver: "scripted" },
        { id: "lean", driver: "scripted", toolProfile: "core" },
      ],
    },
  });
  ({ threadId } = await h.createThread({ title: "profiles" }));
});
afterAll(async () => {
  await h.close();
});

async function agent(toolProfile: "core" | "full" | undefined): Promise<LoomMcpClient> {
  const credential = await h.server.credentials.issue(
    { environmentId: h.server.environmentId, threadId, providerInstanceId: "scripted", providerSessionId: `provider-session:profiles:${crypto.randomUUID()}` },
    toolProfile === undefined ? {} : { toolProfile },
  );
  return h.connect(credential.token, `profile-${toolProfile ?? "default"}`);
}

describe("tool profiles", () => {
  it("the core set is the nine tools an agent needs to delegate, wait, read, send and answer requests, plus loom_tools", () => {
    expect(CORE).toEqual(
      [
        "delegate_task",
        "task_status",
        "task_cancel",
        "t3_thread_wait",
        "t3_thread_read",
        "t3_thread_send",
        "t3_pending_request_list",
        "t3_pending_request_respond",
        "t3_background_wait",
        "loom_tools",
      ].sort(),
    );
  });

  it("a core credential lists only the core set; the owner, a full and a default credential list every tool", async () => {
    expect(await (await agent("core")).listToolNames()).toEqual(CORE);
    expect(await (await agent("full")).listToolNames()).toEqual(EVERY);
    expect(await (await agent(undefined)).listToolNames()).toEqual(EVERY);
    expect(await h.owner.listToolNames()).toEqual(EVERY);
  });

  it("a core credential finds a full-profile tool by query, with its input schema, and calls it through loom_tools", async () => {
    const core = await agent("core");
    const found = await core.ok<LoomToolsOutput>("loom_tools", { query: "list threads", names: ["t3_thread_read"] });
    expect(found.profile).toBe("core");
    const list = found.tools.find((tool) => tool.name === "t3_thread_list");
    expect(list).toMatchObject({ listed: false, readOnly: true, inputSchema: { type: "object" } });
    expect(Object.keys((list!.inputSchema as { properties: object }).properties)).toContain("limit");
    const core2 = found.tools.find((tool) => tool.name === "t3_thread_read");
    expect(core2?.listed).toBe(true);

    const called = await core.ok<LoomToolsOutput>("loom_tools", { call: { name: "t3_thread_list", arguments: { limit: 5 } } });
    expect(called.call?.name).toBe("t3_thread_list");
    expect((called.call?.result as { threads: { threadId: string }[] }).threads.map((t) => t.threadId)).toContain(threadId);
    // The client's name for the tool (mcp__t3-code__...) is accepted too.
    const prefixed = await core.ok<LoomToolsOutput>("loom_tools", { call: { name: "mcp__t3-code__t3_thread_configuration", arguments: {} } });
    expect(prefixed.call?.result).toMatchObject({ threadId });
  });

  it("a core credential still calls a tool its listing leaves out by name: the profile only trims the listing", async () => {
    const core = await agent("core");
    const direct = await core.ok<{ threads: { threadId: string }[] }>("t3_thread_list", {});
    expect(direct.threads.map((t) => t.threadId)).toContain(threadId);
  });

  it("names describe exact tools; unknown names and calls are typed failures", async () => {
    const core = await agent("core");
    const named = await core.ok<LoomToolsOutput>("loom_tools", { names: ["t3_thread_fork", "no_such_tool"] });
    expect(named.tools.map((tool) => tool.name)).toEqual(["t3_thread_fork"]);
    expect(named.unknownNames).toEqual(["no_such_tool"]);
    const unknown = await core.call("loom_tools", { call: { name: "no_such_tool" } });
    expect(unknown.errorCode).toBe("invalid_request");
    const nested = await core.call("loom_tools", { call: { name: "loom_tools", arguments: {} } });
    expect(nested.errorCode).toBe("invalid_request");
    const badArguments = await core.call("loom_tools", { call: { name: "t3_thread_list", arguments: { limit: "five" } } });
    expect(badArguments).toMatchObject({ errorCode: "invalid_request" });
    expect(badArguments.errorMessage).toContain("t3_thread_list");
    // Without query, names or call: every tool.
    const all = await core.ok<LoomToolsOutput>("loom_tools", {});
    expect(all.tools.map((tool) => tool.name).sort()).toEqual(EVERY.filter((name) => name !== "loom_tools"));
  });

  it("a session on an instance with toolProfile core gets a core credential", async () => {
    const launched = await h.launch({
      message: script({ call: "loom_tools", args: { names: ["t3_thread_list"] }, as: "found" }, { say: "{{found.profile}} {{found.tools.0.listed}}" }),
      title: "lean agent",
      target: { providerInstanceId: "lean" },
    });
    expect((await h.waitForEnd(launched.runId!)).status).toBe("completed");
    expect(h.assistantTexts(launched.threadId)).toEqual(["core false"]);
    const full = await h.launch({
      message: script({ call: "loom_tools", args: { names: ["t3_thread_list"] }, as: "found" }, { say: "{{found.profile}} {{found.tools.0.listed}}" }),
      title: "full agent",
      target: { providerInstanceId: "scripted" },
    });
    expect((await h.waitForEnd(full.runId!)).status).toBe("completed");
    expect(h.assistantTexts(full.threadId)).toEqual(["full true"]);
  });
});
