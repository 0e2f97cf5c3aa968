import { describe, expect, it } from "vitest";
import { AppServerError, type AppServerExit, AppServerProcess, type AppServerProcessOptions } from "./appServerProcess.js";
import type { ServerNotification, ServerRequest } from "./protocol.js";

/** The JSON-RPC transport against small Node scripts standing in for `codex app-server`. */

/**
 * Echo server: answers `initialize` after `delay` ms, fails `thread/start`,
 * never answers `turn/interrupt`, asks the client a question on `turn/start`
 * and reports the answer as a notification.
 */
const ECHO = String.raw`
const rl = require("node:readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
process.stderr.write("\u001b[31mERROR\u001b[0m booting with secret-abc\n");
process.stdout.write("not json\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") setTimeout(() => send({ id: m.id, result: { delay: m.params.delay } }), m.params.delay);
  else if (m.method === "thread/start") send({ id: m.id, error: { code: -32600, message: "bad thread secret-abc" } });
  else if (m.method === "turn/start") { send({ id: 0, method: "item/tool/requestUserInput", params: { q: 1 } }); send({ id: m.id, result: {} }); }
  else if (m.method === undefined) send({ method: "warning", params: { echo: m } });
});
rl.on("close", () => process.exit(0));
`;

/** Ignores stdin EOF and SIGTERM: only SIGKILL ends it. */
const STUBBORN = String.raw`
process.on("SIGTERM", () => undefined);
process.stdin.resume();
process.stdin.on("end", () => undefined);
setInterval(() => undefined, 1000);
process.stderr.write("ready\n");
`;

interface Recorded {
  readonly notifications: ServerNotification[];
  readonly requests: ServerRequest[];
  readonly exits: AppServerExit[];
}

function start(script: string, overrides: Partial<AppServerProcessOptions> = {}): { server: AppServerProcess; seen: Recorded } {
  const seen: Recorded = { notifications: [], requests: [], exits: [] };
  const server = new AppServerProcess({
    command: process.execPath,
    args: ["-e", script],
    env: process.env,
    cwd: process.cwd(),
    requestTimeoutMs: 5_000,
    secrets: ["secret-abc"],
    onNotification: (notification) => seen.notifications.push(notification),
    onRequest: (request) => seen.requests.push(request),
    onExit: (exit) => seen.exits.push(exit),
    ...overrides,
  });
  return { server, seen };
}

async function failure(promise: Promise<unknown>): Promise<AppServerError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppServerError) return error;
    throw error;
  }
  throw new Error("it resolved");
}

// The transport is typed by the generated ClientRequest; these scripts accept anything.
const anyParams = <T>(value: Record<string, unknown>): T => value as T;

describe("AppServerProcess", () => {
  it("matches responses to requests answered out of order", async () => {
    const { server } = start(ECHO);
    const slow = server.request("initialize", anyParams({ delay: 150 }));
    const fast = server.request("initialize", anyParams({ delay: 10 }));
    expect(await Promise.all([slow, fast])).toEqual([{ delay: 150 }, { delay: 10 }]);
    await server.close();
  });

  it("a JSON-RPC error rejects with rpc_error, its code, and the message with secrets redacted", async () => {
    const { server } = start(ECHO);
    const error = await failure(server.request("thread/start", anyParams({})));
    expect(error).toMatchObject({ code: "rpc_error", rpcCode: -32600, message: "thread/start failed: bad thread [redacted]" });
    await server.close();
  });

  it("hands server requests to onRequest; respond() sends the result back", async () => {
    const { server, seen } = start(ECHO);
    await server.request("turn/start", anyParams({}));
    expect(seen.requests).toEqual([{ id: 0, method: "item/tool/requestUserInput", params: { q: 1 } }]);
    server.respond(0, { answers: {} });
    await expect.poll(() => seen.notifications.length).toBe(1);
    expect(seen.notifications[0]).toEqual({ method: "warning", params: { echo: { id: 0, result: { answers: {} } } } });
    await server.close();
  });

  it("times out a request nobody answers", async () => {
    const { server } = start(ECHO, { requestTimeoutMs: 100 });
    const error = await failure(server.request("turn/interrupt", { threadId: "t", turnId: "u" }));
    expect(error).toMatchObject({ code: "timeout", message: "codex app-server did not answer turn/interrupt within 100 ms" });
    await server.close();
  });

  it("keeps a clean stderr tail: no colour codes, no secrets, stray stdout noted", async () => {
    const { server } = start(ECHO);
    await server.request("initialize", anyParams({ delay: 0 }));
    expect(server.stderrTail()).toContain("ERROR booting with [redacted]");
    expect(server.stderrTail()).toContain("[stdout, not JSON] not json");
    expect(server.stderrTail()).not.toContain("secret-abc");
    await server.close();
  });

  it("close() ends stdin; the server exits; later requests reject closed", async () => {
    const { server, seen } = start(ECHO);
    const exit = await server.close();
    expect(exit).toEqual({ code: 0, signal: null, spawnError: null });
    expect(seen.exits).toEqual([exit]);
    expect(server.isRunning).toBe(false);
    expect(await failure(server.request("initialize", anyParams({ delay: 0 })))).toMatchObject({ code: "closed" });
  });

  it("an exit rejects pending requests with closed", async () => {
    const { server } = start(String.raw`process.stdin.once("data", () => process.exit(4));`);
    const error = await failure(server.request("initialize", anyParams({ delay: 0 })));
    expect(error).toMatchObject({ code: "closed", message: "initialize: codex app-server exited (code 4)" });
  });

  it("kills a server that ignores EOF and SIGTERM", async () => {
    const { server } = start(STUBBORN);
    await expect.poll(() => server.stderrTail()).toBe("ready");
    const exit = await server.close(100);
    expect(exit.signal).toBe("SIGKILL");
  });

  it("a missing executable is spawn_failed", async () => {
    const { server, seen } = start("", { command: "/nonexistent/codex-binary", args: [] });
    const error = await failure(server.request("initialize", anyParams({ delay: 0 })));
    expect(error.code).toBe("spawn_failed");
    expect(seen.exits[0]?.spawnError).toContain("ENOENT");
  });
});
