import { describe, expect, it } from "vitest";
import { COMMAND_TYPES, INTERNAL_COMMAND_TYPES, PUBLIC_COMMAND_TYPES, isCommandType } from "./commandTypes.js";
import { EVENT_TYPES, isEventType } from "./eventTypes.js";

describe("command names", () => {
  it("has 55 public and 8 internal commands, all distinct", () => {
    expect(PUBLIC_COMMAND_TYPES).toHaveLength(55);
    expect(INTERNAL_COMMAND_TYPES).toHaveLength(8);
    expect(COMMAND_TYPES).toHaveLength(63);
    expect(new Set(COMMAND_TYPES).size).toBe(63);
  });

  it("keeps public and internal commands apart", () => {
    const publicSet = new Set<string>(PUBLIC_COMMAND_TYPES);
    expect(INTERNAL_COMMAND_TYPES.filter((type) => publicSet.has(type))).toEqual([]);
    expect(INTERNAL_COMMAND_TYPES).toContain("secret_request.record");
    expect(PUBLIC_COMMAND_TYPES).toContain("delegated_task.request");
  });

  it("isCommandType accepts every command name and nothing else", () => {
    for (const type of COMMAND_TYPES) expect(isCommandType(type)).toBe(true);
    expect(isCommandType("thread.created")).toBe(false);
    expect(isCommandType("thread.create ")).toBe(false);
    expect(isCommandType("")).toBe(false);
  });
});

describe("event names", () => {
  it("has spec 004's 45 events plus Loom's 5 extensions, all distinct", () => {
    expect(EVENT_TYPES).toHaveLength(50);
    expect(new Set(EVENT_TYPES).size).toBe(50);
    expect(EVENT_TYPES.slice(45)).toEqual(["client-request.recorded", "scheduled-task.updated", "scheduled-task.deleted", "workflow.updated", "workflow.step.updated"]);
  });

  it("isEventType accepts every event name and nothing else", () => {
    for (const type of EVENT_TYPES) expect(isEventType(type)).toBe(true);
    expect(isEventType("thread.create")).toBe(false);
    expect(isEventType("Thread.Created")).toBe(false);
  });

  it("no name is both a command and an event", () => {
    expect(COMMAND_TYPES.filter((type) => isEventType(type))).toEqual([]);
  });
});
