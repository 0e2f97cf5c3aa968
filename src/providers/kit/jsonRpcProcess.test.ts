import { processAlive } from "../../testkit/loomProcess.js";
import { describe, expect, it } from "vitest";
import { pollUntil } from "../../testkit/poll.js";
import { piRpcDialect } from "../pi/rpcDialect.js";
import { JsonRpcProcess, type JsonRpcProcessOptions } from "./jsonRpcProcess.js";
import type { ProcessExit } from "./stdioProcess.js";
import { StdioRpcError } from "./stdioRpcError.js";

/**
 * The kit's stdio process against small Node scripts: the framing, the
 * correlation under another dialect than JSON-RPC (pi's envelope), and the
 * process group. codex/appServerProcess.test.ts covers the JSON-RPC dialect.
 */

/** Answers every JSON-RPC request with its params, in one write split across two chunks, with a U+2028 inside a string. */
const SPLIT_WRITER = String.raw`
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  const text = JSON.stringify({ id: m.id, result: { text: "a\u2028b", params: m.params } }) + "\n" + JSON.stringify({ method: "after", params: {} }) + "\n";
  const cut = text.indexOf("\u2028") + 1;
  process.stdout.write(text.slice(0, cut));
  setTimeout(() => process.stdout.write(text.slice(cut)), 20);
});
rl.on("close", () => process.exit(0));
`;

/** Speaks pi's envelope: get_state answers, prompt is refused, then an event and an extension UI request. */
const PI_LIKE = String.raw`
const rl = require("node:readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type === "get_state") send({ type: "response", id: m.id, command: m.type, success: true, data: { sessionId: "s1", echo: m } });
  else if (m.type === "prompt") {
    send({ type: "response", id: m.id, command: m.type, success: false, error: "Agent is already processing" });
    send({ type: "agent_start" });
    send({ type: "extension_ui_request", id: "dlg-1", method: "confirm" });
  }
});
rl.on("close", () => process.exit(0));
`;

/** Leaves a grandchild in its process group, prints its pid, and exits. */
const LEAVES_A_CHILD = String.raw`
const child = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => undefined, 1000)"], { stdio: "ignore" });
process.stdout.write(JSON.stringify({ method: "grandchild", params: { pid: child.pid } }) + "\n");
setTimeout(() => process.exit(0), 50);
`;

interface Seen {
  readonly notifications: Record<string, unknown>[];
  readonly requests: Record<string, unknown>[];
  readonly exits: ProcessExit[];
}

function start(script: string, overrides: Partial<JsonRpcProcessOptions> = {}): { rpc: JsonRpcProcess; seen: Seen } {
  const seen: Seen = { notifications: [], requests: [], exits: [] };
  const rpc = new JsonRpcProcess({
    command: process.execPath,
    args: ["-e", script],
    env: process.env,
    cwd: process.cwd(),
    label: "the test peer",
    requestTimeoutMs: 5_000,
    onNotification: (message) => seen.notifications.push(message),
    onRequest: (message) => seen.requests.push(message),
    onExit: (exit) => seen.exits.push(exit),
    ...overrides,
  });
  return { rpc, seen };
}

describe("JsonRpcProcess", () => {
  it("reads a line split across chunks whole, a U+2028 inside it included, and keeps arrival order", async () => {
    const { rpc, seen } = start(SPLIT_WRITER);
    expect(await rpc.request("echo", { n: 1 })).toEqual({ text: "a\u2028b", params: { n: 1 } });
    await expect.poll(() => seen.notifications).toEqual([{ method: "after", params: {} }]);
    await rpc.close();
  });

  it("correlates by another dialect's ids and envelope (pi): a result, a refusal, then the peer's event and request", async () => {
    const { rpc, seen } = start(PI_LIKE, { dialect: piRpcDialect });
    const state = await rpc.request<{ sessionId: string; echo: unknown }>("get_state", {});
    expect(state).toEqual({ sessionId: "s1", echo: { type: "get_state", id: "loom-1" } });
    const refused = await rpc.request("prompt", { message: "hi" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StdioRpcError);
    expect(refused).toMatchObject({ code: "rpc_error", rpcCode: null, message: "prompt failed: Agent is already processing" });
    await expect.poll(() => seen.requests).toEqual([{ type: "extension_ui_request", id: "dlg-1", method: "confirm" }]);
    expect(seen.notifications).toEqual([{ type: "agent_start" }]);
    await rpc.close();
  });

  it("after the process exits, what it left in its process group is killed", async () => {
    const { rpc, seen } = start(LEAVES_A_CHILD);
    await expect.poll(() => seen.exits.length).toBe(1);
    const pid = (seen.notifications[0]?.params as { pid: number }).pid;
    expect(typeof pid).toBe("number");
    await pollUntil(() => processAlive(pid), (running) => !running, `grandchild ${pid} to be killed`);
    expect(rpc.isRunning).toBe(false);
    expect(await rpc.request("anything", {}).catch((error: unknown) => error)).toMatchObject({ code: "closed", message: "anything: the test peer exited (code 0)" });
  });
});
