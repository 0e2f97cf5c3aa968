import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A stand-in for `pi --mode rpc` in unit tests: a small Node script that
 * speaks Pi's JSONL RPC (the driver's transport is the one fake DESIGN §6
 * allows; event shapes follow docs/rpc.md and what the real Pi 0.73.1 sent
 * in pi.e2e.test.ts). It logs its argv, environment and every command to
 * FAKE_PI_LOG. The prompt decides what it does:
 *
 *   "hang"   the agent runs until steered, aborted or stopped
 *   "ask"    a confirm dialog (as Loom's extension asks before bash); the answer ends the turn with "confirmed: <bool>"
 *   "crash"  the process exits with code 3 (stderr quotes the bearer token)
 *   else     one assistant message "echo: <text>" with usage, then agent_end
 *
 * A steer ends a hanging turn with "steered: <text>"; abort ends it with stopReason "aborted".
 */
export const FAKE_PI = String.raw`
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.FAKE_PI_LOG, JSON.stringify(entry) + "\n");
log({ kind: "start", argv: process.argv.slice(2), env: process.env });
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
let hanging = false;
let dialogs = 0;
const waiting = new Map();
const usage = { input: 10, output: 2, cacheRead: 4, cacheWrite: 0, totalTokens: 16, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 } };
function answer(text, stopReason = "stop") {
  const message = { role: "assistant", content: text === "" ? [] : [{ type: "text", text }], api: "openai-completions", provider: "loom", model: "m", usage, stopReason, timestamp: 1 };
  send({ type: "message_start", message: { ...message, content: [] } });
  if (text !== "") send({ type: "message_update", message, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: text } });
  send({ type: "message_end", message });
  send({ type: "turn_end", message, toolResults: [] });
  send({ type: "agent_end", messages: [message] });
  hanging = false;
}
let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf("\n")) !== -1) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    const command = JSON.parse(line);
    log({ kind: "in", command });
    const { id, type } = command;
    if (type === "get_state") { send({ id, type: "response", command: type, success: true, data: { sessionId: "pi-session-1", isStreaming: false } }); continue; }
    if (type === "prompt") {
      if (hanging) { send({ id, type: "response", command: type, success: false, error: "Agent is already processing" }); continue; }
      send({ id, type: "response", command: type, success: true });
      send({ type: "agent_start" });
      send({ type: "turn_start" });
      const text = command.message;
      if (text === "crash") { process.stderr.write("fatal: lost " + process.env.T3_MCP_BEARER_TOKEN + "\n"); process.exit(3); }
      if (text === "hang") { hanging = true; continue; }
      if (text === "ask") { hanging = true; const dialog = "dlg-" + ++dialogs; waiting.set(dialog, true); send({ type: "extension_ui_request", id: dialog, method: "confirm", title: "[loom:command] Run rm -rf build", message: "{}" }); continue; }
      answer("echo: " + text);
      continue;
    }
    if (type === "steer") {
      if (!hanging) { send({ id, type: "response", command: type, success: false, error: "not streaming" }); continue; }
      send({ id, type: "response", command: type, success: true });
      answer("steered: " + command.message);
      continue;
    }
    if (type === "abort") {
      send({ id, type: "response", command: type, success: true });
      if (hanging) answer("", "aborted");
      continue;
    }
    if (type === "extension_ui_response" && waiting.has(command.id)) {
      waiting.delete(command.id);
      answer("confirmed: " + String(command.confirmed));
      continue;
    }
    if (id !== undefined) send({ id, type: "response", command: type, success: false, error: "unknown command" });
  }
});
`;

export interface FakePiLogEntry {
  readonly kind: "start" | "in";
  readonly argv?: string[];
  readonly env?: Record<string, string>;
  readonly command?: { id?: string; type?: string; message?: string; confirmed?: boolean; cancelled?: boolean };
}

export interface FakePi {
  /** An executable to pass as options.binaryPath. */
  readonly binary: string;
  /** Pass as FAKE_PI_LOG in options.env. */
  readonly logFile: string;
  logEntries(): FakePiLogEntry[];
}

/** Writes the fake and its launcher into `dir` (which the caller removes). */
export function installFakePi(dir: string): FakePi {
  writeFileSync(join(dir, "pi.mjs"), FAKE_PI);
  const binary = join(dir, "fake-pi");
  writeFileSync(binary, `#!/bin/sh\nexec "${process.execPath}" "${join(dir, "pi.mjs")}" "$@"\n`);
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
            .map((line) => JSON.parse(line) as FakePiLogEntry)
        : [],
  };
}
