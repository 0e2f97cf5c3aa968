import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderItem } from "../events.js";
import { openScriptedHarness } from "./sessionHarness.js";
import type { ScriptedHarness } from "./sessionHarness.js";

const script = (steps: unknown[]): string => JSON.stringify({ script: steps });

let cwd: string;

/** Wait until a command the turn runs has created `path`: the command is then running. */
async function waitForFile(path: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
let harness: ScriptedHarness;

beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "loom-scripted-"));
  harness = await openScriptedHarness({ cwd });
});

afterEach(async () => {
  await harness.session.stop();
  await rm(cwd, { recursive: true, force: true });
});

function texts(runId: string): string[] {
  return harness.items(runId).flatMap((item) => (item.kind === "assistant_message" ? [item.text] : []));
}

describe("scripted session: turns", () => {
  it("echoes a plain message between turn.started and its usage and turn.completed, with item ids", async () => {
    const end = await harness.run("run-1", "hello there");
    expect(end).toEqual({ type: "turn.completed", runId: "run-1", status: "completed", error: null });
    expect(harness.events).toEqual([
      { type: "turn.started", runId: "run-1", nativeThreadId: "scripted:provider-session:test", nativeTurnId: "scripted:provider-session:test:turn-1" },
      {
        type: "item.completed",
        runId: "run-1",
        itemId: "item-1",
        item: { kind: "assistant_message", text: "Echo: hello there" },
      },
      // 11 characters in, 17 out: one token per started 4 characters.
      { type: "usage", runId: "run-1", inputTokens: 3, outputTokens: 5 },
      end,
    ]);
  });

  it("native ids: one thread id per session, turn ids numbered per session", async () => {
    await harness.run("run-1", "a");
    await harness.run("run-2", script([{ fail: "no" }]));
    const started = harness.events.filter((e) => e.type === "turn.started");
    expect(started.map((e) => (e.type === "turn.started" ? [e.nativeThreadId, e.nativeTurnId] : []))).toEqual([
      ["scripted:provider-session:test", "scripted:provider-session:test:turn-1"],
      ["scripted:provider-session:test", "scripted:provider-session:test:turn-2"],
    ]);
  });

  it("usage: input counts the turn's input and its steers, output its assistant messages; an interrupted turn reports it too", async () => {
    const input = script([{ say: "12345678" }, { ask: "go on?" }]);
    await harness.session.startTurn({ runId: "run-1", input });
    await harness.nextItem("run-1", (item) => item.kind === "user_input_request");
    await harness.session.steerTurn({ runId: "run-1", input: "steer" });
    await harness.session.interruptTurn({ runId: "run-1" });
    const usage = harness.events.filter((e) => e.type === "usage");
    // Output: "12345678" and "Steered: steer" (8 + 14 characters).
    expect(usage).toEqual([{ type: "usage", runId: "run-1", inputTokens: Math.ceil((input.length + 5) / 4), outputTokens: Math.ceil(22 / 4) }]);
    expect(harness.events.at(-2)).toEqual(usage[0]);
    expect(harness.events.at(-1)).toMatchObject({ type: "turn.completed", status: "interrupted" });
  });

  it("numbers items per session across turns", async () => {
    await harness.run("run-1", script([{ say: "a" }, { say: "b" }]));
    await harness.run("run-2", "c");
    const ids = harness.events.flatMap((e) => (e.type === "item.completed" ? [e.itemId] : []));
    expect(ids).toEqual(["item-1", "item-2", "item-3"]);
  });

  it("refuses a second turn while one runs, and accepts one after it ended", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ sleep: 10_000 }]) });
    await expect(harness.session.startTurn({ runId: "run-2", input: "x" })).rejects.toMatchObject({
      name: "ProviderError",
      code: "turn_not_active",
    });
    await harness.session.interruptTurn({ runId: "run-1" });
    const end = await harness.run("run-2", "x");
    expect(end.status).toBe("completed");
    expect(harness.events.filter((e) => e.runId === "run-2" && e.type === "turn.started")).toHaveLength(1);
  });

  it("a fail step emits an error item, ends the turn failed and skips the rest", async () => {
    const end = await harness.run("run-1", script([{ say: "before" }, { fail: "could not do it" }, { say: "after" }]));
    expect(end).toMatchObject({ status: "failed", error: "could not do it" });
    expect(harness.items("run-1")).toEqual([
      { kind: "assistant_message", text: "before" },
      { kind: "error", message: "could not do it" },
    ]);
  });

  it("a malformed script fails the turn with an error item naming the step index, running nothing", async () => {
    const end = await harness.run("run-1", script([{ say: "ok" }, { jump: 1 }]));
    expect(end.status).toBe("failed");
    expect(end.error).toContain("script[1]");
    expect(harness.items("run-1")).toEqual([{ kind: "error", message: end.error }]);
  });

  it("an unknown template variable fails the turn at that step", async () => {
    const end = await harness.run("run-1", script([{ say: "one" }, { say: "{{result.x}}" }]));
    expect(end.status).toBe("failed");
    expect(end.error).toBe('script[1] (say): unknown variable "result" in {{result.x}}; defined so far: input, context, outputSchema');
    expect(texts("run-1")).toEqual(["one"]);
  });

  it("turnDelayMs waits at the start of each turn, after turn.started", async () => {
    const delayed = await openScriptedHarness({ cwd, options: { turnDelayMs: 150 } });
    const started = performance.now();
    await delayed.session.startTurn({ runId: "run-1", input: "x" });
    expect(delayed.events).toEqual([{ type: "turn.started", runId: "run-1", nativeThreadId: "scripted:provider-session:test", nativeTurnId: "scripted:provider-session:test:turn-1" }]);
    await delayed.turnEnd("run-1");
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    await delayed.session.stop();
  });

  it("startupDelayMs delays openSession, and an aborted open rejects", async () => {
    const started = performance.now();
    const delayed = await openScriptedHarness({ cwd, options: { startupDelayMs: 150 } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    await delayed.session.stop();

    const controller = new AbortController();
    const opening = openScriptedHarness({ cwd, options: { startupDelayMs: 10_000 }, signal: controller.signal });
    controller.abort();
    await expect(opening).rejects.toMatchObject({ name: "ProviderError", code: "aborted" });
  });
});

describe("scripted session: steer, interrupt, stop", () => {
  it("steering answers at once with an assistant message and the script goes on", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ sleep: 200 }, { say: "done" }]) });
    await harness.session.steerTurn({ runId: "run-1", input: "also do X" });
    expect(texts("run-1")).toEqual(["Steered: also do X"]);
    const end = await harness.turnEnd("run-1");
    expect(end.status).toBe("completed");
    expect(texts("run-1")).toEqual(["Steered: also do X", "done"]);
  });

  it("steering or interrupting without a running turn is turn_not_active", async () => {
    await expect(harness.session.steerTurn({ runId: "run-1", input: "x" })).rejects.toMatchObject({ code: "turn_not_active" });
    await expect(harness.session.interruptTurn({ runId: "run-1" })).rejects.toMatchObject({ code: "turn_not_active" });
    await harness.session.startTurn({ runId: "run-1", input: script([{ sleep: 10_000 }]) });
    await expect(harness.session.steerTurn({ runId: "run-other", input: "x" })).rejects.toMatchObject({
      code: "turn_not_active",
    });
  });

  it("an instance without steering rejects steerTurn as unsupported", async () => {
    const rigid = await openScriptedHarness({ cwd, options: { capabilities: { steering: false } } });
    await rigid.session.startTurn({ runId: "run-1", input: script([{ sleep: 10_000 }]) });
    await expect(rigid.session.steerTurn({ runId: "run-1", input: "x" })).rejects.toMatchObject({ code: "unsupported" });
    await rigid.session.stop();
  });

  it("interrupting a sleep ends the turn interrupted promptly, and nothing of the run follows", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ sleep: 10_000 }, { say: "never" }]) });
    const started = performance.now();
    await harness.session.interruptTurn({ runId: "run-1" });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(harness.events.at(-1)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    const count = harness.events.length;
    // The session runs one turn at a time: once a later turn has ended, a leftover step of run-1 would have shown up.
    await harness.run("run-2", script([{ say: "after" }]));
    expect(harness.events.slice(count).filter((event) => event.runId === "run-1")).toEqual([]);
  });

  it("interrupting a pending question abandons it", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ ask: "name?" }]) });
    const { item } = await harness.nextItem("run-1", (i) => i.kind === "user_input_request");
    await harness.session.interruptTurn({ runId: "run-1" });
    expect((await harness.turnEnd("run-1")).status).toBe("interrupted");
    const requestId = item.kind === "user_input_request" ? item.requestId : "";
    await expect(harness.session.respondToRequest({ requestId, response: { answer: "x" } })).rejects.toMatchObject({
      code: "request_not_found",
    });
  });

  it("stop interrupts the running turn, then every method says session_closed", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ sleep: 10_000 }]) });
    await harness.session.stop();
    expect(harness.events.at(-1)).toMatchObject({ type: "turn.completed", status: "interrupted" });
    await harness.session.stop();
    await expect(harness.session.startTurn({ runId: "run-2", input: "x" })).rejects.toMatchObject({ code: "session_closed" });
    await expect(harness.session.respondToRequest({ requestId: "request-1", response: {} })).rejects.toMatchObject({
      code: "session_closed",
    });
  });
});

describe("scripted session: ask and approve", () => {
  async function askAndAnswer(response: unknown): Promise<ProviderItem[]> {
    const input = script([{ ask: "Favourite colour?" }, { say: "You said {{answer}} / {{answers.q1}}" }]);
    await harness.session.startTurn({ runId: "run-1", input });
    const { item } = await harness.nextItem("run-1", (i) => i.kind === "user_input_request");
    expect(item).toEqual({
      kind: "user_input_request",
      requestId: "request-1",
      questions: [{ id: "q1", question: "Favourite colour?" }],
    });
    await harness.session.respondToRequest({ requestId: "request-1", response });
    expect((await harness.turnEnd("run-1")).status).toBe("completed");
    return harness.items("run-1");
  }

  it("answers shaped { answers: { q1 } } are stored as answer and answers", async () => {
    const items = await askAndAnswer({ answers: { q1: "teal" } });
    expect(items.at(-1)).toEqual({ kind: "assistant_message", text: "You said teal / teal" });
  });

  it("answers shaped { answer } work too", async () => {
    const items = await askAndAnswer({ answer: "red" });
    expect(items.at(-1)).toEqual({ kind: "assistant_message", text: "You said red / red" });
  });

  it("answers as lists of strings, as Loom's runtime-request.respond sends them, are joined", async () => {
    const items = await askAndAnswer({ answers: { q1: ["teal", "navy"] } });
    expect(items.at(-1)).toEqual({ kind: "assistant_message", text: "You said teal, navy / teal, navy" });
  });

  it("a dismissal stores an empty answer and the script goes on", async () => {
    expect((await askAndAnswer({ dismissed: true })).at(-1)).toEqual({ kind: "assistant_message", text: "You said  / " });
  });

  it("a response of the wrong shape is rejected and the request stays open", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ ask: "?" }, { say: "got {{answer}}" }]) });
    await harness.nextItem("run-1", (i) => i.kind === "user_input_request");
    const wrongShape = harness.session.respondToRequest({ requestId: "request-1", response: { decision: "accept" } });
    await expect(wrongShape).rejects.toMatchObject({ code: "protocol_error" });
    const unknown = harness.session.respondToRequest({ requestId: "request-9", response: { answer: "x" } });
    await expect(unknown).rejects.toMatchObject({ code: "request_not_found" });
    await harness.session.respondToRequest({ requestId: "request-1", response: { answer: "late" } });
    await harness.turnEnd("run-1");
    expect(texts("run-1")).toEqual(["got late"]);
  });

  it.each([
    ["accept", ["decision: accept"]],
    ["acceptForSession", ["decision: acceptForSession"]],
    ["accept_for_session", ["decision: acceptForSession"]],
    ["decline", ["Approval declined: Run a command (rm -rf build)", "decision: decline"]],
    ["cancel", ["Approval cancelled: Run a command (rm -rf build)", "decision: cancel"]],
  ])("approve answered %s stores {decision} and continues", async (decision, expected) => {
    await harness.session.startTurn({
      runId: "run-1",
      input: script([{ approve: { kind: "command", detail: "rm -rf build" } }, { say: "decision: {{approval.decision}}" }]),
    });
    const { item } = await harness.nextItem("run-1", (i) => i.kind === "approval_request");
    expect(item).toEqual({
      kind: "approval_request",
      requestId: "request-1",
      requestKind: "command",
      title: "Run a command",
      detail: "rm -rf build",
    });
    await harness.session.respondToRequest({ requestId: "request-1", response: { decision } });
    expect((await harness.turnEnd("run-1")).status).toBe("completed");
    expect(texts("run-1")).toEqual(expected);
  });
});

describe("scripted session: write and run", () => {
  it("write creates the file with its directories, then reports an update with line counts", async () => {
    const end = await harness.run(
      "run-1",
      script([
        { write: { path: "src/notes/a.txt", content: "one\ntwo\nthree\n" } },
        { write: { path: "src/notes/a.txt", content: "one\n2\nthree\nfour\n" } },
      ]),
    );
    expect(end.status).toBe("completed");
    expect(await readFile(join(cwd, "src/notes/a.txt"), "utf8")).toBe("one\n2\nthree\nfour\n");
    expect(harness.items("run-1")).toEqual([
      { kind: "file_change", changes: [{ path: "src/notes/a.txt", kind: "add", additions: 3, deletions: 0 }] },
      { kind: "file_change", changes: [{ path: "src/notes/a.txt", kind: "update", additions: 2, deletions: 1 }] },
    ]);
  });

  it.each([["../escape.txt"], ["a/../../escape.txt"], ["/tmp/loom-scripted-absolute.txt"]])(
    "a write to %s fails the turn and creates nothing",
    async (path) => {
      const end = await harness.run("run-1", script([{ write: { path, content: "x" } }, { say: "never" }]));
      expect(end.status).toBe("failed");
      expect(end.error).toContain("script[0] (write): refusing to write");
      expect(texts("run-1")).toEqual([]);
      await expect(readFile(join(cwd, "..", "escape.txt"), "utf8")).rejects.toThrow();
      await expect(readFile("/tmp/loom-scripted-absolute.txt", "utf8")).rejects.toThrow();
    },
  );

  it("run captures the exit code and stdout+stderr, and the turn goes on after a failing command", async () => {
    await writeFile(join(cwd, "marker.txt"), "here");
    const end = await harness.run("run-1", script([{ run: "cat marker.txt; echo oops >&2; exit 3" }, { say: "after" }]));
    expect(end.status).toBe("completed");
    const [item] = harness.items("run-1");
    expect(item).toMatchObject({
      kind: "command_execution",
      command: "cat marker.txt; echo oops >&2; exit 3",
      cwd,
      exitCode: 3,
      outputTruncated: false,
    });
    expect(item?.kind === "command_execution" ? item.outputPreview : "").toBe("hereoops\n");
    expect(item?.kind === "command_execution" ? item.durationMs : null).toEqual(expect.any(Number));
    expect(texts("run-1")).toEqual(["after"]);
  });

  it("run keeps only the first 2,000 characters of output", async () => {
    await harness.run("run-1", script([{ run: "head -c 5000 /dev/zero | tr '\\0' a" }]));
    const [item] = harness.items("run-1");
    expect(item).toMatchObject({ kind: "command_execution", exitCode: 0, outputTruncated: true });
    expect(item?.kind === "command_execution" ? item.outputPreview : "").toBe("a".repeat(2_000));
  });

  it("interrupting a running command kills it", async () => {
    await harness.session.startTurn({ runId: "run-1", input: script([{ run: "touch started.txt; sleep 5; echo late > late.txt" }]) });
    await waitForFile(join(cwd, "started.txt"));
    const started = performance.now();
    await harness.session.interruptTurn({ runId: "run-1" });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(harness.items("run-1")).toEqual([]);
    expect((await harness.turnEnd("run-1")).status).toBe("interrupted");
  });

  it("a command over commandTimeoutMs is killed with a null exit code", async () => {
    const short = await openScriptedHarness({ cwd, options: { commandTimeoutMs: 100 } });
    await short.run("run-1", script([{ run: "echo start; sleep 5" }]));
    const [item] = short.items("run-1");
    expect(item).toMatchObject({ kind: "command_execution", exitCode: null });
    expect(item?.kind === "command_execution" ? item.outputPreview : "").toBe("start\n\n[killed after 100 ms]");
    await short.session.stop();
  });

  it("a call step without an MCP endpoint is a failed tool item and the turn goes on", async () => {
    const input = script([{ call: "orchestrator_capabilities", as: "caps" }, { say: "still here" }]);
    const end = await harness.run("run-1", input);
    expect(end.status).toBe("completed");
    expect(harness.items("run-1")).toEqual([
      {
        kind: "dynamic_tool",
        toolName: "orchestrator_capabilities",
        arguments: {},
        result: { error: "this session has no Loom MCP endpoint" },
        status: "failed",
      },
      { kind: "assistant_message", text: "still here" },
    ]);
  });
});

describe("scripted session: event order", () => {
  it("a new turn may start from inside the turn.completed callback", async () => {
    const started: Promise<void>[] = [];
    const chained = await openScriptedHarness({ cwd });
    const original = chained.events.push.bind(chained.events);
    chained.events.push = (...events) => {
      const length = original(...events);
      if (events.some((e) => e.type === "turn.completed" && e.runId === "run-1")) {
        started.push(chained.session.startTurn({ runId: "run-2", input: "next" }));
      }
      return length;
    };
    await chained.run("run-1", "first");
    expect(started).toHaveLength(1);
    await Promise.all(started);
    expect((await chained.turnEnd("run-2")).status).toBe("completed");
    expect(chained.events.map((e) => `${e.type}:${e.runId}`)).toEqual([
      "turn.started:run-1",
      "item.completed:run-1",
      "usage:run-1",
      "turn.completed:run-1",
      "turn.started:run-2",
      "item.completed:run-2",
      "usage:run-2",
      "turn.completed:run-2",
    ]);
    await chained.session.stop();
  });
});
