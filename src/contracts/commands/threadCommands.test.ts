import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PUBLIC_COMMAND_SCHEMAS, parseCommand } from "../commands.js";
import * as threadCommands from "./threadCommands.js";

const parse = (type: string, data: unknown) => parseCommand({ type, commandId: "command:1", data });
const failureCode = (type: string, data: unknown) => {
  const result = parse(type, data);
  return result.ok ? "ok" : result.failure.code;
};

describe("thread command schemas", () => {
  it("cover the 22 lifecycle and organization commands, each in the public table under its own type", () => {
    const schemas = Object.values(threadCommands).filter((value) => value instanceof z.ZodObject && "type" in value.shape);
    expect(schemas).toHaveLength(22);
    const table: Readonly<Record<string, unknown>> = PUBLIC_COMMAND_SCHEMAS;
    for (const schema of schemas) expect(table[(schema.shape.type as z.ZodLiteral<string>).value]).toBe(schema);
  });

  it.each([
    ["thread.archive", { threadId: "t" }],
    ["thread.snooze", { threadId: "t", until: "2026-03-02T12:00:00Z" }],
    ["thread.snooze", { threadId: "t", until: "2026-03-02T14:00:00.5+02:00" }],
    ["thread.auto-settle.set", { threadId: "t", autoSettle: false }],
    ["thread.pin.reorder", { threadIds: [] }],
    ["thread.active.reorder", { threadIds: ["a", "b"] }],
    ["thread.pull-request.link", { threadId: "t", url: "https://github.com/o/r/pull/1", number: 1, title: "x" }],
    ["thread.pull-request.unlink", { threadId: "t", url: "https://github.com/o/r/pull/1" }],
    ["thread.metadata.update", { threadId: "t", title: "Renamed" }],
    ["thread.runtime-mode.set", { threadId: "t", runtimeMode: "auto-accept-edits" }],
    ["thread.interaction-mode.set", { threadId: "t", interactionMode: "plan" }],
    ["thread.model-selection.set", { threadId: "t", modelSelection: { providerInstanceId: "codex:1", model: null } }],
  ])("accepts a valid %s", (type, data) => {
    expect(failureCode(type, data)).toBe("ok");
  });

  it.each([
    ["an unknown runtime mode", "thread.runtime-mode.set", { threadId: "t", runtimeMode: "read-only" }],
    ["an unknown interaction mode", "thread.interaction-mode.set", { threadId: "t", interactionMode: "chat" }],
    ["a snooze time that is not an ISO instant", "thread.snooze", { threadId: "t", until: "tomorrow" }],
    ["a snooze time without a zone", "thread.snooze", { threadId: "t", until: "2026-03-02T12:00:00" }],
    ["a non-boolean autoSettle", "thread.auto-settle.set", { threadId: "t", autoSettle: "yes" }],
    ["a reorder without threadIds", "thread.pin.reorder", {}],
    ["a pull request url that is not a url", "thread.pull-request.link", { threadId: "t", url: "pull 1" }],
    ["a pull request number that is not positive", "thread.pull-request.link", { threadId: "t", url: "https://x.test/1", number: 0 }],
    ["a title over 500 characters", "thread.metadata.update", { threadId: "t", title: "x".repeat(501) }],
    ["a model selection with an extra field", "thread.model-selection.set", { threadId: "t", modelSelection: { providerInstanceId: "p", model: null, effort: "high" } }],
    ["an extra data field", "thread.pin", { threadId: "t", rank: 0 }],
    ["a missing threadId", "thread.visit", {}],
  ])("rejects %s as invalid_command", (_what, type, data) => {
    expect(failureCode(type, data)).toBe("invalid_command");
  });
});
