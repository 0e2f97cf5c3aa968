import { describe, expect, it } from "vitest";
import type { Command } from "../../contracts/commands.js";
import { threadEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, CREATED_AT, existing } from "../testing/fixtures.js";
import { aSession, sessionAttached } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";
import { aWorkspace, workspaceEffects } from "../testing/workspaceFixtures.js";

const A = "thread:a";
const LATER = "2026-03-02T00:00:00.000Z";

describe("thread.create", () => {
  it("creates a root thread from every given field", () => {
    const state = given()
      .when(
        cmd("thread.create", {
          threadId: A,
          projectId: "project:7",
          title: "  Fix the flaky test  ",
          modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" },
          runtimeMode: "approval-required",
          interactionMode: "plan",
          worktreePath: "/repo/.worktrees/a",
          branch: "fix/flaky",
          createdBy: "agent",
          creationSource: "mcp",
        }),
      )
      .then([
        threadEvent("thread.created", {
          ...aThread({ id: A }),
          projectId: "project:7",
          title: "Fix the flaky test",
          providerInstanceId: "codex:1",
          modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" },
          runtimeMode: "approval-required",
          interactionMode: "plan",
          worktreePath: "/repo/.worktrees/a",
          branch: "fix/flaky",
          createdBy: "agent",
          creationSource: "mcp",
          createdAt: NOW,
          updatedAt: NOW,
        }),
      ]);
    expect(state.threads.get(A)?.title).toBe("Fix the flaky test");
  });

  it("allocates an id and fills defaults when only the project is given", () => {
    const id = "thread:00000000-0000-4000-8000-000000000001";
    given()
      .when(cmd("thread.create", { projectId: "project:1" }))
      .then([
        threadEvent("thread.created", {
          ...aThread({ id }),
          title: "New thread",
          runtimeMode: "full-access",
          interactionMode: "default",
          autoSettle: true,
          createdAt: NOW,
          updatedAt: NOW,
        }),
      ]);
  });

  it("rejects an id that is taken", () => {
    given(existing(aThread({ id: A })))
      .when(cmd("thread.create", { threadId: A, projectId: "project:1" }))
      .thenRejects(RejectionCode.threadAlreadyExists);
  });

  it("rejects the id of a deleted thread: ids are never reused", () => {
    given(existing(aThread({ id: A, deletedAt: CREATED_AT })))
      .when(cmd("thread.create", { threadId: A, projectId: "project:1" }))
      .thenRejects(RejectionCode.threadDeleted);
  });

  it("rejects a blank title", () => {
    given().when(cmd("thread.create", { projectId: "project:1", title: "   " })).thenRejects(RejectionCode.invalidTitle);
  });

  it("rejects a mode outside the closed sets when called directly", () => {
    const badRuntime = { ...cmd("thread.create", { projectId: "p" }), data: { projectId: "p", runtimeMode: "root" } };
    given().whenUnparsed(badRuntime).thenRejects(RejectionCode.invalidMode);
    const badInteraction = { ...cmd("thread.create", { projectId: "p" }), data: { projectId: "p", interactionMode: "yolo" } };
    given().whenUnparsed(badInteraction).thenRejects(RejectionCode.invalidMode);
  });
});

describe("thread.archive", () => {
  it("archives and takes the thread out of the pinned and active lists", () => {
    const thread = aThread({ id: A, pinnedRank: 2, activeRank: 0 });
    given(existing(thread))
      .when(cmd("thread.archive", { threadId: A }))
      .then([threadEvent("thread.archived", { ...thread, archivedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null })]);
  });

  it("rejects an archived thread", () => {
    given(existing(aThread({ id: A, archivedAt: CREATED_AT })))
      .when(cmd("thread.archive", { threadId: A }))
      .thenRejects(RejectionCode.threadAlreadyArchived);
  });

  it("archives the subtree with it: every live descendant not archived yet, at any depth, and nothing outside it", () => {
    const parent = aThread({ id: A });
    const child = aThread({ id: "thread:child", activeRank: 1, lineage: { rootThreadId: A, parentThreadId: A, parentNodeId: null, relation: "subagent" } });
    const grandchild = aThread({ id: "thread:grandchild", lineage: { rootThreadId: A, parentThreadId: "thread:child", parentNodeId: null, relation: "fork" } });
    const archivedChild = aThread({ id: "thread:old", archivedAt: CREATED_AT, lineage: { rootThreadId: A, parentThreadId: A, parentNodeId: null, relation: "subagent" } });
    const deletedChild = aThread({ id: "thread:gone", deletedAt: CREATED_AT, lineage: { rootThreadId: A, parentThreadId: A, parentNodeId: null, relation: "subagent" } });
    const stranger = aThread({ id: "thread:other" });
    const state = given(...[parent, child, grandchild, archivedChild, deletedChild, stranger].map(existing))
      .when(cmd("thread.archive", { threadId: A }))
      .then([
        threadEvent("thread.archived", { ...parent, archivedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null }),
        threadEvent("thread.archived", { ...child, archivedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null }),
        threadEvent("thread.archived", { ...grandchild, archivedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null }),
      ]);
    expect(state.threads.get("thread:other")?.archivedAt).toBeNull();
    // Unarchiving the parent brings back every archived descendant, the one archived before it too.
    const back = given(...[parent, child, grandchild, archivedChild, stranger].map(existing), ...[parent, child, grandchild].map((t) => threadEvent("thread.archived", { ...t, archivedAt: NOW })))
      .when(cmd("thread.unarchive", { threadId: A }))
      .thenHistory();
    expect(back.slice(-4).map((event) => [event.type, event.streamId])).toEqual([
      ["thread.unarchived", A],
      ["thread.unarchived", "thread:child"],
      ["thread.unarchived", "thread:old"],
      ["thread.unarchived", "thread:grandchild"],
    ]);
  });

  it("rejects an unknown thread", () => {
    const rejection = given().when(cmd("thread.archive", { threadId: A })).thenRejects(RejectionCode.threadNotFound);
    expect(rejection.message).toContain(A);
  });
});

describe("thread.unarchive", () => {
  it("clears archivedAt and leaves the thread unranked", () => {
    const thread = aThread({ id: A, archivedAt: CREATED_AT });
    const state = given(existing(thread))
      .when(cmd("thread.unarchive", { threadId: A }))
      .then([threadEvent("thread.unarchived", { ...thread, archivedAt: null, updatedAt: NOW })]);
    expect(state.threads.get(A)?.pinnedRank).toBeNull();
  });

  it("rejects a thread that is not archived", () => {
    given(existing(aThread({ id: A })))
      .when(cmd("thread.unarchive", { threadId: A }))
      .thenRejects(RejectionCode.threadNotArchived);
  });
});

describe("thread.delete", () => {
  it("soft-deletes: sets deletedAt, unpins and drops the active rank, keeps the record", () => {
    const thread = aThread({ id: A, pinnedRank: 0, activeRank: 3, archivedAt: CREATED_AT });
    const state = given(existing(thread))
      .when(cmd("thread.delete", { threadId: A }))
      .then([threadEvent("thread.deleted", { ...thread, deletedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null })]);
    expect(state.threads.get(A)?.deletedAt).toBe(NOW);
  });

  it("releases the agent session of a thread with no run at work (its agent home goes with it)", () => {
    const thread = aThread({ id: A });
    given(existing(thread), sessionAttached(aSession(A, { id: "provider-session:a" })))
      .when(cmd("thread.delete", { threadId: A }))
      .then(
        [threadEvent("thread.deleted", { ...thread, deletedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null })],
        [{ kind: "provider.session.release", streamId: A, payload: { threadId: A, reason: "thread_deleted", message: "released because the thread was deleted" }, replaySafe: true }],
      );
  });

  it("deletes the subtree with it: every live descendant at any depth, archived or not, each with its own session and worktree, and nothing outside it", () => {
    const parent = aThread({ id: A });
    const child = aThread({ id: "thread:child", activeRank: 1, workspace: aWorkspace(), lineage: { rootThreadId: A, parentThreadId: A, parentNodeId: null, relation: "subagent" } });
    const grandchild = aThread({ id: "thread:grandchild", archivedAt: CREATED_AT, lineage: { rootThreadId: A, parentThreadId: "thread:child", parentNodeId: null, relation: "fork" } });
    const deletedChild = aThread({ id: "thread:gone", deletedAt: CREATED_AT, lineage: { rootThreadId: A, parentThreadId: A, parentNodeId: null, relation: "subagent" } });
    const stranger = aThread({ id: "thread:other" });
    const state = given(...[parent, child, grandchild, deletedChild, stranger].map(existing), sessionAttached(aSession("thread:grandchild", { id: "provider-session:g" })))
      .when(cmd("thread.delete", { threadId: A }))
      .then(
        [
          threadEvent("thread.deleted", { ...parent, deletedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null }),
          threadEvent("thread.deleted", { ...child, deletedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null }),
          threadEvent("thread.deleted", { ...grandchild, deletedAt: NOW, updatedAt: NOW, pinnedRank: null, activeRank: null }),
        ],
        [
          workspaceEffects.cleanup("thread:child"),
          { kind: "provider.session.release", streamId: "thread:grandchild", payload: { threadId: "thread:grandchild", reason: "thread_deleted", message: "released because the thread was deleted" }, replaySafe: true },
        ],
      );
    expect(state.threads.get("thread:other")?.deletedAt).toBeNull();
    expect(state.threads.get("thread:gone")?.deletedAt).toBe(CREATED_AT);
  });

  it("rejects a deleted thread", () => {
    given(existing(aThread({ id: A, deletedAt: CREATED_AT })))
      .when(cmd("thread.delete", { threadId: A }))
      .thenRejects(RejectionCode.threadDeleted);
  });

  it("rejects an unknown thread", () => {
    given().when(cmd("thread.delete", { threadId: A })).thenRejects(RejectionCode.threadNotFound);
  });
});

/** Every command that targets one existing thread. */
const targeted = (threadId: string): Command[] => [
  cmd("thread.archive", { threadId }),
  cmd("thread.unarchive", { threadId }),
  cmd("thread.delete", { threadId }),
  cmd("thread.settle", { threadId }),
  cmd("thread.unsettle", { threadId }),
  cmd("thread.auto-settle", { threadId }),
  cmd("thread.auto-settle.set", { threadId, autoSettle: false }),
  cmd("thread.snooze", { threadId, until: LATER }),
  cmd("thread.unsnooze", { threadId }),
  cmd("thread.visit", { threadId }),
  cmd("thread.mark-unread", { threadId }),
  cmd("thread.pin", { threadId }),
  cmd("thread.unpin", { threadId }),
  cmd("thread.metadata.update", { threadId, title: "Renamed" }),
  cmd("thread.pull-request.link", { threadId, url: "https://github.com/o/r/pull/1" }),
  cmd("thread.pull-request.unlink", { threadId, url: "https://github.com/o/r/pull/1" }),
  cmd("thread.runtime-mode.set", { threadId, runtimeMode: "approval-required" }),
  cmd("thread.interaction-mode.set", { threadId, interactionMode: "plan" }),
  cmd("thread.model-selection.set", { threadId, modelSelection: { providerInstanceId: "claude:1", model: null } }),
];

describe("a deleted thread", () => {
  // The deleted record is in a state every command would otherwise accept or
  // reject for another reason; thread_deleted must win over both.
  const deleted = aThread({
    id: A,
    deletedAt: CREATED_AT,
    archivedAt: CREATED_AT,
    settledAt: CREATED_AT,
    snoozedUntil: LATER,
    pullRequests: [{ url: "https://github.com/o/r/pull/1", number: 1, title: null, linkedAt: CREATED_AT, unlinkedAt: null }],
  });

  it.each(targeted(A).map((command) => [command.type, command] as const))("rejects %s with thread_deleted", (_type, command) => {
    given(existing(deleted)).when(command).thenRejects(RejectionCode.threadDeleted);
  });

  it("covers every targeted command", () => {
    expect(new Set(targeted(A).map((c) => c.type)).size).toBe(19);
  });
});

describe("an unknown thread", () => {
  it.each(targeted(A).map((command) => [command.type, command] as const))("rejects %s with thread_not_found", (_type, command) => {
    given(existing(aThread({ id: "thread:other" }))).when(command).thenRejects(RejectionCode.threadNotFound);
  });
});
