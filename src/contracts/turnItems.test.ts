import { describe, expect, it } from "vitest";
import { DecodeError } from "./forwardCompatible.js";
import { TURN_ITEM_TYPES, type TurnItemOf, type TurnItemType, TurnItemSchema, decodeTurnItem, isTurnItemType } from "./turnItems.js";

const EXPECTED_TYPES = [
  "notification",
  "user_message",
  "assistant_message",
  "reasoning",
  "proposed_plan",
  "todo_list",
  "user_input_request",
  "file_change",
  "command_execution",
  "file_search",
  "web_search",
  "approval_request",
  "checkpoint",
  "run_interrupt_request",
  "run_interrupt_result",
  "system_notice",
  "error",
  "compaction",
  "handoff",
  "fork",
  "thread_created",
  "secret_request",
  "subagent",
  "dynamic_tool",
];

const base = {
  id: "turn-item:1",
  threadId: "thread:1",
  runId: "run:1",
  position: 4,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:01.000Z",
};

/** One valid sample per variant; the mapped type makes a missing variant a compile error. */
const samples: { [T in TurnItemType]: TurnItemOf<T> } = {
  notification: { ...base, type: "notification", title: "Child asks", text: "answer it", sourceThreadId: "thread:2" },
  user_message: {
    ...base,
    type: "user_message",
    messageId: "message:1",
    text: "hi",
    createdBy: "agent",
    creationSource: "mcp",
  },
  assistant_message: {
    ...base,
    type: "assistant_message",
    messageId: "message:2",
    text: "",
    textOmitted: true,
    streaming: false,
    createdBy: "agent",
    creationSource: "provider",
  },
  reasoning: { ...base, type: "reasoning", summary: "thinking", text: null, encryptedContentPresent: true },
  proposed_plan: {
    ...base,
    type: "proposed_plan",
    planId: "plan:1",
    title: null,
    markdown: "# Plan",
    steps: [{ text: "do it", status: "pending" }],
  },
  todo_list: { ...base, type: "todo_list", items: [{ id: "1", content: "write tests", status: "in_progress" }] },
  user_input_request: {
    ...base,
    type: "user_input_request",
    requestId: "runtime-request:1",
    questions: [
      { id: "q1", header: null, question: "Which?", options: [{ label: "A", description: null }], multiSelect: false },
    ],
    status: "answered",
    answers: { q1: ["A"] },
  },
  file_change: {
    ...base,
    type: "file_change",
    changes: [{ path: "src/a.ts", kind: "modified", diff: "@@", additions: 1, deletions: 2 }],
    status: "completed",
  },
  command_execution: {
    ...base,
    type: "command_execution",
    command: "npm test",
    cwd: "/repo",
    status: "failed",
    exitCode: 1,
    durationMs: 1200,
    outputPreview: "FAIL",
    outputTruncated: true,
    outputStreamId: "stream:1",
  },
  file_search: {
    ...base,
    type: "file_search",
    query: "decide",
    matches: [{ path: "src/core/decider.ts", line: 3, preview: "export function decide" }],
    truncated: false,
  },
  web_search: {
    ...base,
    type: "web_search",
    query: "zod 4",
    action: "search",
    results: [{ title: "Zod", url: "https://zod.dev", snippet: null }],
  },
  approval_request: {
    ...base,
    type: "approval_request",
    requestId: "runtime-request:2",
    requestKind: "command",
    title: "Run rm?",
    detail: null,
    status: "pending",
    decision: null,
  },
  checkpoint: {
    ...base,
    type: "checkpoint",
    checkpointId: "checkpoint:1",
    scopeId: "checkpoint-scope:1",
    appRunOrdinal: 2,
    status: "ready",
    files: [{ path: "a.txt", previousPath: null, kind: "added", additions: 3, deletions: 0, binary: false }],
  },
  run_interrupt_request: { ...base, type: "run_interrupt_request", requestedBy: "user", reason: null },
  run_interrupt_result: { ...base, type: "run_interrupt_result", outcome: "interrupted", message: null },
  system_notice: { ...base, type: "system_notice", level: "warning", text: "provider restarted" },
  error: { ...base, type: "error", code: "provider_crashed", message: "exit 1", detail: null },
  compaction: {
    ...base,
    type: "compaction",
    trigger: "auto",
    direction: "provider_native",
    tokensBefore: 100_000,
    tokensAfter: 20_000,
    summary: null,
  },
  handoff: {
    ...base,
    type: "handoff",
    handoffId: "context-handoff:1",
    fromProvider: "codex",
    toProvider: "claude",
    strategy: "full_thread_summary",
    status: "ready",
  },
  fork: { ...base, type: "fork", sourceThreadId: "thread:1", targetThreadId: "thread:3", sourceRunOrdinal: 2 },
  thread_created: { ...base, type: "thread_created", childThreadId: "thread:4", relation: "subagent", title: "Review" },
  secret_request: {
    ...base,
    type: "secret_request",
    secretName: "GitHub token",
    envVarName: "GITHUB_TOKEN",
    description: null,
    status: "pending",
  },
  subagent: {
    ...base,
    type: "subagent",
    subagentId: "subagent:1",
    childThreadId: "thread:5",
    agentLabel: "reviewer",
    prompt: "",
    promptOmitted: true,
    result: "looks good",
    status: "completed",
  },
  dynamic_tool: {
    ...base,
    type: "dynamic_tool",
    toolName: "lookup",
    arguments: { q: 1 },
    result: null,
    status: "in_progress",
  },
};

describe("TURN_ITEM_TYPES", () => {
  it("lists exactly the 24 variants of spec 004 §2.1", () => {
    const types = Object.values(TURN_ITEM_TYPES);
    expect(types).toHaveLength(24);
    expect(new Set(types).size).toBe(24);
    expect([...types].sort()).toEqual([...EXPECTED_TYPES].sort());
  });

  it("isTurnItemType recognizes only known types", () => {
    expect(isTurnItemType("dynamic_tool")).toBe(true);
    expect(isTurnItemType("message")).toBe(false);
  });
});

describe("decodeTurnItem", () => {
  for (const type of EXPECTED_TYPES) {
    it(`decodes a ${type} sample`, () => {
      const sample = samples[type as TurnItemType];
      const decoded = decodeTurnItem(structuredClone(sample));
      expect(decoded).toEqual(sample);
      expect("type" in decoded && decoded.type).toBe(type);
      expect(TurnItemSchema.parse(sample)).toEqual(sample);
    });
  }

  it("keeps an unknown type as an unknown variant with its tag and raw value", () => {
    const raw = { ...base, type: "hologram", beams: 3 };
    const decoded = decodeTurnItem(raw);
    expect(decoded).toEqual({ tag: "unknown", rawTag: "hologram", raw });
    expect("raw" in decoded && decoded.raw).toBe(raw);
  });

  it("throws DecodeError for a known type with a wrong shape", () => {
    expect(() => decodeTurnItem({ ...samples.command_execution, exitCode: "one" })).toThrow(DecodeError);
    expect(() => decodeTurnItem({ ...samples.subagent, status: "dreaming" })).toThrow(DecodeError);
    expect(() => decodeTurnItem({ ...samples.user_message, creationSource: "telepathy" })).toThrow(DecodeError);
  });

  it("throws DecodeError when any required field of any variant is missing", () => {
    const optional = new Set(["textOmitted", "filesOmitted", "promptOmitted", "resultOmitted"]);
    for (const sample of Object.values(samples)) {
      for (const field of Object.keys(sample)) {
        if (optional.has(field) || field === "type") continue;
        const broken: Record<string, unknown> = { ...sample };
        delete broken[field];
        expect(() => decodeTurnItem(broken), `${sample.type} without ${field}`).toThrow(DecodeError);
      }
    }
  });

  it("throws DecodeError for a value with no string type tag", () => {
    expect(() => decodeTurnItem(null)).toThrow(DecodeError);
    expect(() => decodeTurnItem({ ...base, type: 7 })).toThrow(DecodeError);
  });
});
