import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A stand-in for `codex app-server` in unit tests: a small Node script that
 * speaks the same line-delimited JSON-RPC (the driver's transport is the one
 * fake DESIGN §6 allows). It logs its argv, environment and every message it
 * reads to FAKE_CODEX_LOG. The turn input decides what it does:
 *
 *   "hang"    the turn runs until it is steered, interrupted or stopped
 *   "approve" a command approval request; the decision ends the turn
 *   "crash"   the process exits with code 3 (stderr quotes the bearer token)
 *   anything else: one assistant message "echo: <input>", then turn/completed
 *
 * A steer ends the running turn with "steered: <input>". Thread "thr-1",
 * turns "turn-1", "turn-2", ... in order. The real binary is exercised by
 * codex.e2e.test.ts.
 */
export const FAKE_APP_SERVER = String.raw`
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
const log = (entry) => appendFileSync(process.env.FAKE_CODEX_LOG, JSON.stringify(entry) + "\n");
log({ kind: "start", argv: process.argv.slice(2), env: process.env });
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
let turns = 0;
let current = null;
let token = "";
let serverIds = 0;
const waiting = new Map();
const turn = (id, status) => ({ id, rootTurnId: id, items: [], itemsView: "notLoaded", status, error: null, startedAt: null, completedAt: null, durationMs: null });
function complete(turnId, text) {
  send({ method: "item/completed", params: { threadId: "thr-1", turnId, completedAtMs: 0, item: { type: "agentMessage", id: "msg-" + turnId, text, phase: null, moderation: null, memoryCitation: null, delivery: null, questions: null } } });
  send({ method: "turn/completed", params: { threadId: "thr-1", turn: turn(turnId, "completed") } });
  current = null;
}
createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  log({ kind: "in", message });
  const { id, method, params } = message;
  if (method === "initialize") return send({ id, result: { userAgent: "fake", codexHome: process.env.CODEX_HOME, platformFamily: "unix", platformOs: "linux" } });
  if (method === "thread/start" || method === "thread/resume") {
    token = params.config?.mcp_servers?.["t3-code"]?.http_headers?.Authorization ?? "";
    return send({ id, result: { thread: { id: params.threadId ?? "thr-1" } } });
  }
  if (method === "turn/start") {
    const turnId = "turn-" + ++turns;
    current = turnId;
    const text = params.input[0].text;
    // A resumed thread reports its last turn's token usage, which may arrive as a turn begins.
    if (text === "earlier usage first") send({ method: "thread/tokenUsage/updated", params: { threadId: "thr-1", turnId: "turn-earlier", tokenUsage: { total: { inputTokens: 7, cachedInputTokens: 0, outputTokens: 3 } } } });
    send({ method: "turn/started", params: { threadId: "thr-1", turn: turn(turnId, "inProgress") } });
    send({ id, result: { turn: turn(turnId, "inProgress") } });
    if (text === "crash") {
      process.stderr.write("fatal: lost " + token + "\n");
      process.exit(3);
    }
    if (text === "approve") {
      const requestId = serverIds++;
      waiting.set(requestId, turnId);
      send({ method: "item/started", params: { threadId: "thr-1", turnId, startedAtMs: 0, item: { type: "commandExecution", id: "call_1", command: "rm -rf build", cwd: "/w", status: "inProgress" } } });
      return send({ id: requestId, method: "item/commandExecution/requestApproval", params: { kind: "command", threadId: "thr-1", turnId, itemId: "call_1", startedAtMs: 0, environmentId: null, command: "rm -rf build", cwd: "/w" } });
    }
    if (text !== "hang") complete(turnId, "echo: " + text);
    return;
  }
  if (method === "turn/steer") {
    if (current === null) return send({ id, error: { code: -32600, message: "no active turn to steer" } });
    send({ id, result: { turnId: params.expectedTurnId } });
    return complete(current, "steered: " + params.input[0].text);
  }
  if (method === "turn/interrupt") {
    if (current === null) return send({ id, error: { code: -32600, message: "no active turn to interrupt" } });
    send({ method: "turn/completed", params: { threadId: "thr-1", turn: turn(current, "interrupted") } });
    current = null;
    return send({ id, result: {} });
  }
  if (method === undefined && waiting.has(id)) {
    const turnId = waiting.get(id);
    waiting.delete(id);
    complete(turnId, "decision: " + JSON.stringify(message.result));
  }
});
`;

export interface FakeCodexLogEntry {
  readonly kind: "start" | "in";
  readonly argv?: string[];
  readonly env?: Record<string, string>;
  readonly message?: { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown };
}

export interface FakeCodex {
  /** An executable to pass as options.binaryPath. */
  readonly binary: string;
  /** Pass as FAKE_CODEX_LOG in options.env. */
  readonly logFile: string;
  /** What the fake logged so far, in order. */
  logEntries(): FakeCodexLogEntry[];
}

/** Writes the fake and its launcher into `dir` (which the caller removes). */
export function installFakeCodex(dir: string): FakeCodex {
  writeFileSync(join(dir, "server.mjs"), FAKE_APP_SERVER);
  const binary = join(dir, "fake-codex");
  writeFileSync(binary, `#!/bin/sh\nexec "${process.execPath}" "${join(dir, "server.mjs")}" "$@"\n`);
  chmodSync(binary, 0o755);
  const logFile = join(dir, "log.jsonl");
  return {
    binary,
    logFile,
    logEntries: () =>
      existsSync(logFile)
        ? readFileSync(logFile, "utf8")
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as FakeCodexLogEntry)
        : [],
  };
}
