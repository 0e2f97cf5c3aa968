import { describe, expect, expectTypeOf, it } from "vitest";
import { COMMAND_SCHEMAS, COMMAND_TYPES, INTERNAL_COMMAND_SCHEMAS, LOOM_COMMAND_SCHEMAS, PUBLIC_COMMAND_SCHEMAS, parseCommand } from "./commands.js";
import {
  EVENT_SCHEMAS,
  EVENT_TYPES,
  type EventType,
  LOOM_EVENT_SCHEMAS,
  SPEC_EVENT_SCHEMAS,
  type ThreadEventType,
  ThreadEventDataSchema,
  decodeDomainEvent,
  isEventType,
} from "./events.js";
import { DecodeError } from "./forwardCompatible.js";
import { NAMED_NOT_IMPLEMENTED, type NotImplementedKind } from "./notImplemented.js";

/** Spec 004 §3.1 and §3.2 as written there: the names the tables plus NAMED_NOT_IMPLEMENTED must be, exactly. */
const SPEC_PUBLIC_COMMANDS = [
  ...["thread.stop", "thread.create", "thread.archive", "thread.guest-share.close", "thread.guest-message.dismiss", "thread.unarchive", "thread.delete"],
  ...["thread.settle", "thread.auto-settle", "thread.unsettle", "thread.snooze", "thread.unsnooze", "thread.auto-settle.set", "thread.pin", "thread.unpin"],
  ...["thread.pin.reorder", "thread.active.reorder", "thread.visit", "thread.mark-unread", "thread.metadata.update", "thread.pull-request.link"],
  ...["thread.pull-request.unlink", "thread.pull-request-link.sync", "thread.pull-request.watch", "thread.pull-request.sync"],
  ...["thread.title.regeneration.complete", "thread.runtime-mode.set", "thread.interaction-mode.set", "thread.model-selection.set"],
  ...["provider-session.detach", "message.dispatch", "prepared-run.release", "notification.delivery.accept", "prepared-run.progress", "prepared-run.fail"],
  ...["prepared-run.retry", "subagent.stop", "run.interrupt", "queued-message.promote-to-steer", "queue.resume", "queued-run.start", "queued-run.reorder"],
  ...["queued-run.cancel", "queued-run.edit"],
  ...["runtime-request.respond", "thread.user-input.dismiss", "checkpoint.rollback"],
  ...["thread.fork", "thread.merge_back", "delegated_task.request", "delegated_task.wake-policy", "delegated_task.completion-delivery.acknowledge"],
  ...["delegated_task.completion-delivery.dispose", "thread.created.record", "provider.switch"],
];
const SPEC_INTERNAL_COMMANDS = [
  ...["thread.guest-share.open", "thread.guest-share.redeem", "thread.guest-message.submit", "thread.pull-request-watch.sync", "checkpoint.rollback.fail"],
  ...["runtime-request.delivery.fail", "thread.background-work.settle", "secret_request.record"],
];
const SPEC_EVENTS = [
  ...["thread.created", "thread.archived", "thread.unarchived", "thread.deleted", "thread.settled", "thread.unsettled", "thread.snoozed", "thread.unsnoozed"],
  ...["thread.pinned", "thread.auto-settle-set", "thread.unpinned", "thread.pin-reordered", "thread.active-reordered", "thread.visited", "thread.marked-unread"],
  ...["thread.metadata-updated", "thread.pull-request-synced", "thread.pull-request-link-updated", "thread.runtime-mode-updated"],
  ...["thread.interaction-mode-updated", "thread.model-selection-updated", "thread.provider-switched", "thread.guest-share-updated"],
  ...["run.created", "run.updated", "run.background-work-cancelled", "run-attempt.created", "run-attempt.updated", "node.updated", "subagent.updated"],
  ...["provider-session.attached", "provider-session.updated", "provider-session.detached", "provider-thread.updated", "provider-turn.updated"],
  ...["runtime-request.updated", "message.updated", "turn-item.updated", "plan.updated"],
  ...["checkpoint-scope.created", "checkpoint.captured", "checkpoint.rollback-requested", "context-handoff.updated", "context-transfer.created"],
  ...["context-transfer.updated"],
];

const listed = (kind: NotImplementedKind): string[] =>
  Object.entries(NAMED_NOT_IMPLEMENTED)
    .filter(([, entry]) => entry.kind === kind)
    .map(([name]) => name);
const sorted = (names: Iterable<string>): string[] => [...names].sort();
const shared = (a: readonly string[], b: readonly string[]): string[] => a.filter((name) => b.includes(name));

describe("spec 004's names", () => {
  it("are 55 public commands, 8 internal commands and 45 events, all distinct", () => {
    expect(new Set(SPEC_PUBLIC_COMMANDS).size).toBe(55);
    expect(new Set(SPEC_INTERNAL_COMMANDS).size).toBe(8);
    expect(new Set(SPEC_EVENTS).size).toBe(45);
    expect(shared(SPEC_PUBLIC_COMMANDS, SPEC_INTERNAL_COMMANDS)).toEqual([]);
  });

  it.each([
    ["public command", PUBLIC_COMMAND_SCHEMAS, "public-command", SPEC_PUBLIC_COMMANDS],
    ["internal command", INTERNAL_COMMAND_SCHEMAS, "internal-command", SPEC_INTERNAL_COMMANDS],
    ["event", SPEC_EVENT_SCHEMAS, "event", SPEC_EVENTS],
  ] as const)("each %s is implemented (its table) or named as not implemented, never both", (_what, table, kind, spec) => {
    const implemented = Object.keys(table);
    expect(sorted([...implemented, ...listed(kind)])).toEqual(sorted(spec));
    expect(shared(implemented, listed(kind))).toEqual([]);
  });

  it("leaves the named-not-implemented list with nothing the tables implement, each entry saying what it is", () => {
    const names = Object.keys(NAMED_NOT_IMPLEMENTED);
    expect(shared(names, [...COMMAND_TYPES, ...EVENT_TYPES])).toEqual([]);
    for (const entry of Object.values(NAMED_NOT_IMPLEMENTED)) expect(entry.what.length).toBeGreaterThan(20);
  });
});

describe("Loom's extensions", () => {
  it("are no spec name: the Loom command and event tables hold only names of Loom's own", () => {
    const spec = [...SPEC_PUBLIC_COMMANDS, ...SPEC_INTERNAL_COMMANDS, ...SPEC_EVENTS];
    expect(shared(Object.keys(LOOM_COMMAND_SCHEMAS), spec)).toEqual([]);
    expect(shared(Object.keys(LOOM_EVENT_SCHEMAS), spec)).toEqual([]);
    expect(Object.keys(LOOM_EVENT_SCHEMAS)).toEqual(["client-request.recorded", "thread.limit-recovery-updated", "thread.background-tasks-updated", "scheduled-task.updated", "scheduled-task.deleted", "workflow.updated", "workflow.step.updated", "tool-task.updated", "merge-queue.entry-updated", "provider-instance.limit-window-updated"]);
  });
});

describe("the tables", () => {
  it("hold each name once: no command in two command tables, no event in two event tables, no name both a command and an event", () => {
    const commandTables = [PUBLIC_COMMAND_SCHEMAS, INTERNAL_COMMAND_SCHEMAS, LOOM_COMMAND_SCHEMAS].map((table) => Object.keys(table));
    expect(commandTables.flat()).toHaveLength(COMMAND_TYPES.length);
    expect(COMMAND_TYPES).toHaveLength(Object.keys(COMMAND_SCHEMAS).length);
    expect(Object.keys(SPEC_EVENT_SCHEMAS).length + Object.keys(LOOM_EVENT_SCHEMAS).length).toBe(EVENT_TYPES.length);
    expect(EVENT_TYPES).toHaveLength(Object.keys(EVENT_SCHEMAS).length);
    expect(shared(COMMAND_TYPES, EVENT_TYPES)).toEqual([]);
  });

  it("derive the thread events from the table: the 23 thread.* events of the spec and Loom's thread.limit-recovery-updated and thread.background-tasks-updated, whose data is the whole thread", () => {
    const threadTypes = EVENT_TYPES.filter((type) => type.startsWith("thread."));
    expect(threadTypes).toHaveLength(25);
    expect(threadTypes.filter((type) => EVENT_SCHEMAS[type] !== ThreadEventDataSchema)).toEqual([]);
    expectTypeOf<ThreadEventType>().toEqualTypeOf<Extract<EventType, `thread.${string}`>>();
  });

  it("isEventType accepts every event of the table and nothing else", () => {
    for (const type of EVENT_TYPES) expect(isEventType(type)).toBe(true);
    for (const type of listed("event")) expect(isEventType(type)).toBe(false);
    expect(isEventType("thread.create")).toBe(false);
    expect(isEventType("Thread.Created")).toBe(false);
  });
});

describe("decoding events through the table", () => {
  it("keeps an event whose name the table lacks, a spec name not implemented included, whole as unknown (spec 004 §1.2)", () => {
    for (const type of [...listed("event"), "thread.teleported"]) {
      const raw = { type, streamId: "thread:a", data: { plan: [1, 2] } };
      expect(decodeDomainEvent(raw)).toEqual({ type: "unknown", streamId: "thread:a", data: { tag: "unknown", rawTag: type, raw } });
    }
  });

  it("refuses a known type whose data does not match its schema, naming the field", () => {
    expect(() => decodeDomainEvent({ type: "run.updated", streamId: "thread:a", data: { run: { id: 1 } } })).toThrow(DecodeError);
    expect(() => decodeDomainEvent({ type: "run.updated", streamId: "thread:a", data: {} })).toThrow(/invalid run\.updated: data\.run/);
    expect(() => decodeDomainEvent({ type: "run.updated", data: { run: {} } })).toThrow(/streamId/);
  });
});

describe("parseCommand and the names", () => {
  const code = (type: string, allowInternal: boolean) => {
    const result = parseCommand({ type, commandId: "c", data: {} }, { allowInternal });
    return result.ok ? "ok" : result.failure.code;
  };

  it("answers a named, not implemented command unsupported_command, an internal one internal_command to outside clients", () => {
    for (const type of listed("public-command")) expect([type, code(type, false)]).toEqual([type, "unsupported_command"]);
    for (const type of listed("internal-command")) {
      expect([type, code(type, false)]).toEqual([type, "internal_command"]);
      expect([type, code(type, true)]).toEqual([type, "unsupported_command"]);
    }
  });

  it("does not know Loom's own commands or the events' names", () => {
    for (const type of [...Object.keys(LOOM_COMMAND_SCHEMAS), ...SPEC_EVENTS]) expect([type, code(type, true)]).toEqual([type, "unknown_command_type"]);
  });
});
