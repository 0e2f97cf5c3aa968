import { describe, expect, it } from "vitest";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread, PullRequestLink } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, CREATED_AT, existing } from "../testing/fixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const A = "thread:a";
const PR1 = "https://github.com/acme/loom/pull/1";
const PR2 = "https://github.com/acme/loom/pull/2";

const after = (thread: AppThread, fields: Partial<AppThread>): AppThread => ({ ...thread, ...fields, updatedAt: NOW });
const link = (url: string, fields: Partial<PullRequestLink> = {}): PullRequestLink => ({
  url,
  number: null,
  title: null,
  linkedAt: CREATED_AT,
  unlinkedAt: null,
  ...fields,
});

describe("thread.metadata.update", () => {
  it("renames to the trimmed title", () => {
    const thread = aThread({ id: A, title: "Old" });
    const state = given(existing(thread))
      .when(cmd("thread.metadata.update", { threadId: A, title: "  New title \n" }))
      .then([threadEvent("thread.metadata-updated", after(thread, { title: "New title" }))]);
    expect(state.threads.get(A)?.title).toBe("New title");
  });

  it("wins over an in-flight title regeneration, even with the same title", () => {
    const thread = aThread({ id: A, title: "Same", titleRegenerating: true });
    given(existing(thread))
      .when(cmd("thread.metadata.update", { threadId: A, title: "Same" }))
      .then([threadEvent("thread.metadata-updated", after(thread, { titleRegenerating: false }))]);
  });

  it("accepts a title of exactly 500 characters", () => {
    const thread = aThread({ id: A });
    const title = "x".repeat(500);
    given(existing(thread))
      .when(cmd("thread.metadata.update", { threadId: A, title }))
      .then([threadEvent("thread.metadata-updated", after(thread, { title }))]);
  });

  it.each([
    ["empty", ""],
    ["blank", " \t\n "],
    ["over 500 characters", "y".repeat(501)],
  ])("rejects a title that is %s (the schema lets blank ones through; the decider checks all three)", (_what, title) => {
    given(existing(aThread({ id: A })))
      .whenUnparsed(cmd("thread.metadata.update", { threadId: A, title }))
      .thenRejects(RejectionCode.invalidTitle);
  });

  it("rejects the current title", () => {
    given(existing(aThread({ id: A, title: "Same" })))
      .when(cmd("thread.metadata.update", { threadId: A, title: " Same " }))
      .thenRejects(RejectionCode.titleUnchanged);
  });
});

describe("thread.pull-request.link", () => {
  it("links a new pull request with its number and title", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)] });
    given(existing(thread))
      .when(cmd("thread.pull-request.link", { threadId: A, url: PR2, number: 2, title: "Add pins" }))
      .then([
        threadEvent(
          "thread.pull-request-link-updated",
          after(thread, { pullRequests: [link(PR1), { url: PR2, number: 2, title: "Add pins", linkedAt: NOW, unlinkedAt: null }] }),
        ),
      ]);
  });

  it("links without a number or title", () => {
    const thread = aThread({ id: A });
    given(existing(thread))
      .when(cmd("thread.pull-request.link", { threadId: A, url: PR1 }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequests: [link(PR1, { linkedAt: NOW })] }))]);
  });

  it("re-links an unlinked url in place, clearing unlinkedAt and keeping what is not given", () => {
    const earlier = link(PR1, { number: 1, title: "Old title", unlinkedAt: "2026-03-01T11:30:00.000Z" });
    const thread = aThread({ id: A, pullRequests: [earlier, link(PR2)] });
    given(existing(thread))
      .when(cmd("thread.pull-request.link", { threadId: A, url: PR1, title: "New title" }))
      .then([
        threadEvent(
          "thread.pull-request-link-updated",
          after(thread, { pullRequests: [{ url: PR1, number: 1, title: "New title", linkedAt: NOW, unlinkedAt: null }, link(PR2)] }),
        ),
      ]);
  });

  it("rejects a url that is already linked", () => {
    given(existing(aThread({ id: A, pullRequests: [link(PR1)] })))
      .when(cmd("thread.pull-request.link", { threadId: A, url: PR1 }))
      .thenRejects(RejectionCode.pullRequestAlreadyLinked);
  });
});

describe("thread.pull-request.unlink", () => {
  it("marks the link unlinked and keeps it", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1), link(PR2)] });
    given(existing(thread))
      .when(cmd("thread.pull-request.unlink", { threadId: A, url: PR2 }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequests: [link(PR1), link(PR2, { unlinkedAt: NOW })] }))]);
  });

  it("rejects a url that was never linked", () => {
    given(existing(aThread({ id: A, pullRequests: [link(PR1)] })))
      .when(cmd("thread.pull-request.unlink", { threadId: A, url: PR2 }))
      .thenRejects(RejectionCode.pullRequestNotLinked);
  });

  it("rejects a url that is already unlinked", () => {
    given(existing(aThread({ id: A, pullRequests: [link(PR1, { unlinkedAt: CREATED_AT })] })))
      .when(cmd("thread.pull-request.unlink", { threadId: A, url: PR1 }))
      .thenRejects(RejectionCode.pullRequestNotLinked);
  });
});

describe("thread.runtime-mode.set", () => {
  it("changes the runtime mode", () => {
    const thread = aThread({ id: A, runtimeMode: "full-access" });
    given(existing(thread))
      .when(cmd("thread.runtime-mode.set", { threadId: A, runtimeMode: "auto-accept-edits" }))
      .then([threadEvent("thread.runtime-mode-updated", after(thread, { runtimeMode: "auto-accept-edits" }))]);
  });

  it("rejects the current mode", () => {
    given(existing(aThread({ id: A, runtimeMode: "approval-required" })))
      .when(cmd("thread.runtime-mode.set", { threadId: A, runtimeMode: "approval-required" }))
      .thenRejects(RejectionCode.runtimeModeUnchanged);
  });

  it("rejects a mode outside the closed set when called directly", () => {
    const bad = { ...cmd("thread.runtime-mode.set", { threadId: A, runtimeMode: "full-access" }), data: { threadId: A, runtimeMode: "root" } };
    given(existing(aThread({ id: A })))
      .whenUnparsed(bad)
      .thenRejects(RejectionCode.invalidMode);
  });
});

describe("thread.interaction-mode.set", () => {
  it("changes the interaction mode", () => {
    const thread = aThread({ id: A, interactionMode: "default" });
    given(existing(thread))
      .when(cmd("thread.interaction-mode.set", { threadId: A, interactionMode: "plan" }))
      .then([threadEvent("thread.interaction-mode-updated", after(thread, { interactionMode: "plan" }))]);
  });

  it("rejects the current mode", () => {
    given(existing(aThread({ id: A, interactionMode: "plan" })))
      .when(cmd("thread.interaction-mode.set", { threadId: A, interactionMode: "plan" }))
      .thenRejects(RejectionCode.interactionModeUnchanged);
  });

  it("rejects a mode outside the closed set when called directly", () => {
    const bad = { ...cmd("thread.interaction-mode.set", { threadId: A, interactionMode: "plan" }), data: { threadId: A, interactionMode: "chat" } };
    given(existing(aThread({ id: A })))
      .whenUnparsed(bad)
      .thenRejects(RejectionCode.invalidMode);
  });
});

describe("thread.model-selection.set", () => {
  it("sets the selection and the provider instance on a thread that had none", () => {
    const thread = aThread({ id: A });
    given(existing(thread))
      .when(cmd("thread.model-selection.set", { threadId: A, modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" } }))
      .then([
        threadEvent(
          "thread.model-selection-updated",
          after(thread, { providerInstanceId: "codex:1", modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" } }),
        ),
      ]);
  });

  it("switches provider instance and falls back to its default model (null)", () => {
    const thread = aThread({ id: A, providerInstanceId: "codex:1", modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" } });
    const state = given(existing(thread))
      .when(cmd("thread.model-selection.set", { threadId: A, modelSelection: { providerInstanceId: "claude:1", model: null } }))
      .then([
        threadEvent(
          "thread.model-selection-updated",
          after(thread, { providerInstanceId: "claude:1", modelSelection: { providerInstanceId: "claude:1", model: null } }),
        ),
      ]);
    expect(state.threads.get(A)?.providerInstanceId).toBe("claude:1");
  });

  it("rejects the current selection", () => {
    given(existing(aThread({ id: A, providerInstanceId: "codex:1", modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" } })))
      .when(cmd("thread.model-selection.set", { threadId: A, modelSelection: { providerInstanceId: "codex:1", model: "gpt-5" } }))
      .thenRejects(RejectionCode.modelSelectionUnchanged);
  });
});
