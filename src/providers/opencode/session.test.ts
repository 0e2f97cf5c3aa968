import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { ProviderEventRecorder } from "../kit/testSuiteHarness.js";
import type { ProviderSessionRuntime } from "../adapter.js";
import { createOpencodeDriver } from "./driver.js";
import { MCP_TOKEN_ENV } from "./opencodeConfig.js";
import { type FakeOpencode, fakeOpencode } from "./testing/fakeOpencodeServer.js";

/** The opencode session against the fake server: what the process gets, questions, a dying server. */

const TOKEN = "tok_session_test_0123456789";
let dir: string;
let fake: FakeOpencode;
let recorder: ProviderEventRecorder;
let session: ProviderSessionRuntime | null;

const instance: ProviderInstanceConfig = { id: "opencode", driver: "opencode", enabled: true, displayName: null, models: null, options: { startupTimeoutMs: 10_000 } };

async function open(runtimeMode: "approval-required" | "full-access" = "full-access"): Promise<ProviderSessionRuntime> {
  const driver = createOpencodeDriver({ launch: fake.launch, packageBinary: () => "/fake/opencode" });
  session = await driver.openSession({
    instance,
    threadId: "thread:t",
    providerSessionId: "ps:t",
    cwd: dir,
    runtimeMode,
    interactionMode: "plan",
    model: null,
    mcp: { url: "http://127.0.0.1:1/mcp", token: TOKEN },
    onEvent: recorder.onEvent,
  });
  return session;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "loom-opencode-session-"));
  fake = fakeOpencode();
  recorder = new ProviderEventRecorder();
  session = null;
});

afterEach(async () => {
  await session?.stop();
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe("opencode session", () => {
  it("starts `opencode serve` with its own config file and HOME; the token is only in the environment", async () => {
    await open();
    const launched = fake.lastLaunch()!;
    expect(launched.args).toEqual(["serve", "--hostname", "127.0.0.1", "--port", "0"]);
    expect(launched.env[MCP_TOKEN_ENV]).toBe(TOKEN);
    const configPath = launched.env.OPENCODE_CONFIG!;
    const config = await readFile(configPath, "utf8");
    expect(config).not.toContain(TOKEN);
    expect(JSON.parse(config)).toMatchObject({ mcp: { "t3-code": { url: "http://127.0.0.1:1/mcp" } } });
    expect(launched.env.HOME).toBe(join(configPath, "..", "home"));
    // The first prompt carries Loom's instructions and the plan agent; later ones only the agent.
    await session!.startTurn({ runId: "r1", input: "hello" });
    await recorder.turnEnd("r1");
    await session!.startTurn({ runId: "r2", input: "again" });
    await recorder.turnEnd("r2");
    const prompts = fake.requests.filter((r) => r.path.endsWith("/prompt_async")).map((r) => r.body as { agent: string; system?: string });
    expect(prompts[0]).toMatchObject({ agent: "plan", system: expect.stringContaining("delegate_task") });
    expect(prompts[1]).toEqual(expect.objectContaining({ agent: "plan" }));
    expect(prompts[1]?.system).toBeUndefined();
    await session!.stop();
    expect(existsSync(join(configPath, ".."))).toBe(false);
  });

  it("a question is a user_input_request; the answers reach OpenCode in its order", async () => {
    await open();
    await session!.startTurn({ runId: "r1", input: "quiz" });
    const asked = await recorder.item("r1", (item) => item.kind === "user_input_request");
    expect(asked.item).toEqual({ kind: "user_input_request", requestId: "que_0003", questions: [{ id: "q1", question: "Proceed? (yes)" }] });
    await session!.respondToRequest({ requestId: "que_0003", response: { answers: { q1: ["yes"] } } });
    await recorder.item("r1", (item) => item.kind === "assistant_message" && item.text === 'answers: [["yes"]]');
    expect((await recorder.turnEnd("r1")).status).toBe("completed");
  });

  it("a server that dies during a turn fails the turn with its stderr, the token scrubbed", async () => {
    await open();
    await session!.startTurn({ runId: "r1", input: "crash" });
    const end = await recorder.turnEnd("r1");
    expect(end).toMatchObject({ status: "failed" });
    expect(end.error).toContain("opencode exited during the turn (exit code 3)");
    expect(end.error).toContain("fatal: lost [redacted]");
    expect(end.error).not.toContain(TOKEN);
  });

  it("a bad answer shape is protocol_error and leaves the request open", async () => {
    await open("approval-required");
    await session!.startTurn({ runId: "r1", input: "ask" });
    const asked = await recorder.item("r1", (item) => item.kind === "approval_request");
    const requestId = asked.item.kind === "approval_request" ? asked.item.requestId : "";
    await expect(session!.respondToRequest({ requestId, response: { answers: { q1: "x" } } })).rejects.toMatchObject({ code: "protocol_error" });
    await session!.respondToRequest({ requestId, response: { decision: "decline" } });
    await recorder.item("r1", (item) => item.kind === "assistant_message" && item.text === "decision: reject");
  });
});
