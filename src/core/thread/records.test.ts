import { describe, expect, it } from "vitest";
import { threadEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, existing } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, fold, rootWithRun, setupContext, step } from "../testing/delegationFixtures.js";
import { anItem, itemEvent } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";
import { threadCreatedItemId } from "./records.js";

const NEW = aThread({ id: "thread:new", title: "Sibling" });

describe("thread.created.record", () => {
  it("adds a thread_created item on the creator's active run, one per created thread", () => {
    const history = [...rootWithRun(), existing(NEW)];
    const id = threadCreatedItemId(ROOT, NEW.id);
    given(...history)
      .when(cmd("thread.created.record", { threadId: ROOT, childThreadId: NEW.id }))
      .then([itemEvent(anItem(ROOT, ROOT_RUN, 1, id, { type: "thread_created", childThreadId: NEW.id, relation: "root", title: "Sibling" }, { createdAt: NOW }))]);
    const recorded = step(history, cmd("thread.created.record", { threadId: ROOT, childThreadId: NEW.id }), setupContext());
    given(...recorded).when(cmd("thread.created.record", { threadId: ROOT, childThreadId: NEW.id })).thenRejects(RejectionCode.threadCreatedAlreadyRecorded);
  });

  it("refuses an unknown or deleted thread on either side, and a run of another thread", () => {
    const history = [...rootWithRun(), existing(NEW)];
    given(...history).when(cmd("thread.created.record", { threadId: ROOT, childThreadId: "thread:nope" })).thenRejects(RejectionCode.threadNotFound);
    given(...history).when(cmd("thread.created.record", { threadId: "thread:nope", childThreadId: NEW.id })).thenRejects(RejectionCode.threadNotFound);
    given(...history, threadEvent("thread.deleted", { ...NEW, deletedAt: NOW }))
      .when(cmd("thread.created.record", { threadId: ROOT, childThreadId: NEW.id }))
      .thenRejects(RejectionCode.threadDeleted);
    given(...history).when(cmd("thread.created.record", { threadId: ROOT, childThreadId: NEW.id, runId: "run:other" })).thenRejects(RejectionCode.runNotFound);
  });
});

describe("title regeneration", () => {
  const thread = aThread({ id: "thread:t", title: "Old" });
  const start = (title = "First line") => cmd("thread.metadata.update", { threadId: thread.id, title, titleRegenerating: true });
  const complete = (title: string) => cmd("thread.title.regeneration.complete", { threadId: thread.id, title });

  it("starts with the interim title and titleRegenerating, then completes with the generated title", () => {
    given(existing(thread))
      .when(start())
      .then([threadEvent("thread.metadata-updated", { ...thread, title: "First line", titleRegenerating: true, updatedAt: NOW })]);
    const started = step([existing(thread)], start(), setupContext());
    const state = given(...started)
      .when(complete("  Release checklist  "))
      .then([threadEvent("thread.metadata-updated", { ...fold(started).threads.get(thread.id)!, title: "Release checklist", titleRegenerating: false, updatedAt: NOW })]);
    expect(state.threads.get(thread.id)).toMatchObject({ title: "Release checklist", titleRegenerating: false });
  });

  it("runs one regeneration at a time; completing needs one running, and a rename meanwhile wins", () => {
    const started = step([existing(thread)], start(), setupContext());
    given(...started).when(start("Other")).thenRejects(RejectionCode.titleRegenerationRunning);
    given(existing(thread)).when(complete("Title")).thenRejects(RejectionCode.titleRegenerationNotRunning);
    const renamed = step(started, cmd("thread.metadata.update", { threadId: thread.id, title: "Mine" }), setupContext());
    given(...renamed).when(complete("Generated")).thenRejects(RejectionCode.titleRegenerationNotRunning);
    given(...started).when(complete("   ")).thenRejects(RejectionCode.invalidTitle);
  });
});
