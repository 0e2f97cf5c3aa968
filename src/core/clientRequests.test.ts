import { describe, expect, it } from "vitest";
import { clientRequestEvent, threadEvent } from "../contracts/events.js";
import type { AppThread } from "../contracts/thread.js";
import { RejectionCode } from "./rejections.js";
import { aThread, cmd, existing } from "./testing/fixtures.js";
import { TEST_NOW as NOW, given } from "./testing/scenario.js";

/** Request claims (docs/threads.md, Request claims): recorded once, refused for another fingerprint. */

const A = "thread:a";
const KEY = "client-request:owner:tool:t3_thread_update:request:k";
const claim = (fingerprint: string) => ({ key: KEY, tool: "t3_thread_update", fingerprint });
const FIRST = "a".repeat(64);
const OTHER = "b".repeat(64);
const after = (thread: AppThread, fields: Partial<AppThread>): AppThread => ({ ...thread, ...fields, updatedAt: NOW });

describe("clientRequest claims", () => {
  it("the first claim of a key is recorded with the command's events", () => {
    const thread = aThread({ id: A, title: "Old" });
    const command = { ...cmd("thread.metadata.update", { threadId: A, title: "New" }), clientRequest: claim(FIRST) };
    const state = given(existing(thread))
      .when(command)
      .then([
        clientRequestEvent({ key: KEY, tool: "t3_thread_update", fingerprint: FIRST, commandId: command.commandId, recordedAt: NOW }),
        threadEvent("thread.metadata-updated", after(thread, { title: "New" })),
      ]);
    expect(state.clientRequests.get(KEY)?.fingerprint).toBe(FIRST);
  });

  it("a claim of a known key with another fingerprint is rejected", () => {
    const recorded = clientRequestEvent({ key: KEY, tool: "t3_thread_update", fingerprint: FIRST, commandId: "command:0", recordedAt: NOW });
    given(existing(aThread({ id: A, title: "Old" })), recorded)
      .when({ ...cmd("thread.metadata.update", { threadId: A, title: "Other" }), clientRequest: claim(OTHER) })
      .thenRejects(RejectionCode.clientRequestReused);
  });

  it("a claim of a known key with the same fingerprint is decided as usual and not recorded again", () => {
    const thread = aThread({ id: A, title: "Old" });
    const recorded = clientRequestEvent({ key: KEY, tool: "t3_thread_update", fingerprint: FIRST, commandId: "command:0", recordedAt: NOW });
    given(existing(thread), recorded)
      .when({ ...cmd("thread.metadata.update", { threadId: A, title: "New" }), clientRequest: claim(FIRST) })
      .then([threadEvent("thread.metadata-updated", after(thread, { title: "New" }))]);
  });

  it("a rejected command records nothing", () => {
    const state = given(existing(aThread({ id: A, title: "Same" })))
      .when({ ...cmd("thread.metadata.update", { threadId: A, title: "Same" }), clientRequest: claim(FIRST) });
    state.thenRejects(RejectionCode.titleUnchanged);
  });
});
