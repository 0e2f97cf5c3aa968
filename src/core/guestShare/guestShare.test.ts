import { describe, expect, it } from "vitest";
import {
  GUEST_ATTACHMENT_LIMIT,
  GUEST_ATTACHMENT_MAX_BYTES,
  GUEST_MESSAGE_MAX_LENGTH,
  type GuestAttachment,
  GUEST_NAME_MAX_LENGTH,
  GUEST_PENDING_MESSAGE_LIMIT,
  GUEST_SHARE_TTL_MS,
  type GuestMessage,
  type ThreadGuestShare,
} from "../../contracts/entities/guestShares.js";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, runCreated, itemEvent } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const SHARE = "guest-share:1";
const BROWSER = "a".repeat(64);
const OTHER_BROWSER = "b".repeat(64);
const EXPIRES = new Date(Date.parse(NOW) + GUEST_SHARE_TTL_MS).toISOString();

const after = (thread: AppThread, guestShare: ThreadGuestShare): AppThread => ({ ...thread, guestShare, updatedAt: NOW });
const share = (fields: Partial<ThreadGuestShare> = {}): ThreadGuestShare => ({ shareId: SHARE, openedAt: NOW, expiresAt: EXPIRES, closedAt: null, guest: null, messages: [], ...fields });
const guest = { name: "Ada", browserHash: BROWSER, redeemedAt: NOW };
const pendingMessage = (id: string, text = "try the other branch"): GuestMessage => ({ id, text, status: "pending", submittedAt: NOW, decidedAt: null, runId: null });
const sharedThread = (fields: Partial<ThreadGuestShare> = {}) => aThread({ id: A, guestShare: share(fields) });
const submit = (guestMessageId: string, text: string, browserHash = BROWSER) => cmd("thread.guest-message.submit", { threadId: A, shareId: SHARE, browserHash, guestMessageId, text });

describe("thread.guest-share.open and close", () => {
  it("opens a share that expires GUEST_SHARE_TTL_MS (24 h) later", () => {
    const thread = aThread({ id: A });
    given(existing(thread))
      .when(cmd("thread.guest-share.open", { threadId: A, shareId: SHARE }))
      .then([threadEvent("thread.guest-share-updated", after(thread, share()))]);
    expect(GUEST_SHARE_TTL_MS).toBe(86_400_000);
  });

  it("refuses a second share while one is open, and opens a new one once the first expired", () => {
    given(existing(sharedThread())).when(cmd("thread.guest-share.open", { threadId: A, shareId: "guest-share:2" })).thenRejects(RejectionCode.guestShareAlreadyOpen);
    const expired = sharedThread();
    given(existing(expired))
      .when(cmd("thread.guest-share.open", { threadId: A, shareId: "guest-share:2" }), testContext(EXPIRES))
      .then([threadEvent("thread.guest-share-updated", { ...expired, updatedAt: EXPIRES, guestShare: share({ shareId: "guest-share:2", openedAt: EXPIRES, expiresAt: new Date(Date.parse(EXPIRES) + GUEST_SHARE_TTL_MS).toISOString() }) })]);
  });

  it("closes the open share at once and refuses to close it twice", () => {
    const thread = sharedThread({ guest });
    given(existing(thread))
      .when(cmd("thread.guest-share.close", { threadId: A }))
      .then([threadEvent("thread.guest-share-updated", after(thread, share({ guest, closedAt: NOW })))]);
    given(existing(sharedThread({ closedAt: NOW }))).when(cmd("thread.guest-share.close", { threadId: A })).thenRejects(RejectionCode.guestShareNotOpen);
    given(existing(aThread({ id: A }))).when(cmd("thread.guest-share.close", { threadId: A })).thenRejects(RejectionCode.guestShareNotOpen);
  });
});

describe("thread.guest-share.redeem", () => {
  const redeem = (guestName: string, browserHash = BROWSER, shareId = SHARE) => cmd("thread.guest-share.redeem", { threadId: A, shareId, guestName, browserHash });

  it("binds the first browser under the trimmed guest name; the same browser again changes nothing", () => {
    const thread = sharedThread();
    given(existing(thread))
      .when(redeem("  Ada "))
      .then([threadEvent("thread.guest-share-updated", after(thread, share({ guest })))]);
    given(existing(sharedThread({ guest }))).when(redeem("Ada")).then([]);
  });

  it("refuses a second browser", () => {
    given(existing(sharedThread({ guest }))).when(redeem("Eve", OTHER_BROWSER)).thenRejects(RejectionCode.guestShareTaken);
  });

  it("holds the name to 1..40 characters", () => {
    const thread = sharedThread();
    given(existing(thread)).when(redeem("x".repeat(GUEST_NAME_MAX_LENGTH))).thenIncludes(threadEvent("thread.guest-share-updated", after(thread, share({ guest: { ...guest, name: "x".repeat(GUEST_NAME_MAX_LENGTH) } }))));
    given(existing(thread)).when(redeem("x".repeat(GUEST_NAME_MAX_LENGTH + 1))).thenRejects(RejectionCode.invalidGuestName);
    given(existing(thread)).when(redeem("   ")).thenRejects(RejectionCode.invalidGuestName);
  });

  it("refuses a closed, expired or replaced share the same way", () => {
    given(existing(sharedThread({ closedAt: NOW }))).when(redeem("Ada")).thenRejects(RejectionCode.guestShareNotOpen);
    given(existing(sharedThread())).when(redeem("Ada"), testContext(EXPIRES)).thenRejects(RejectionCode.guestShareNotOpen);
    given(existing(sharedThread())).when(redeem("Ada", BROWSER, "guest-share:old")).thenRejects(RejectionCode.guestShareNotOpen);
  });
});

describe("thread.guest-message.submit and dismiss", () => {
  it("adds a pending message from the bound browser, 1 to 4,000 characters", () => {
    const thread = sharedThread({ guest });
    const text = "y".repeat(GUEST_MESSAGE_MAX_LENGTH);
    given(existing(thread))
      .when(submit("guest-message:1", text))
      .then([threadEvent("thread.guest-share-updated", after(thread, share({ guest, messages: [pendingMessage("guest-message:1", text)] })))]);
    given(existing(thread)).when(submit("guest-message:1", `${text}y`)).thenRejects(RejectionCode.invalidGuestMessage);
    given(existing(thread)).when(submit("guest-message:1", " \n ")).thenRejects(RejectionCode.invalidGuestMessage);
  });

  it("refuses another browser, an unredeemed share and a closed one", () => {
    given(existing(sharedThread({ guest }))).when(submit("guest-message:1", "hi", OTHER_BROWSER)).thenRejects(RejectionCode.guestShareTaken);
    given(existing(sharedThread())).when(submit("guest-message:1", "hi")).thenRejects(RejectionCode.guestShareTaken);
    given(existing(sharedThread({ guest, closedAt: NOW }))).when(submit("guest-message:1", "hi")).thenRejects(RejectionCode.guestShareNotOpen);
  });

  it("holds at most 3 pending messages; a dismissed one frees a place", () => {
    const three = [1, 2, 3].map((n) => pendingMessage(`guest-message:${n}`));
    expect(three).toHaveLength(GUEST_PENDING_MESSAGE_LIMIT);
    given(existing(sharedThread({ guest, messages: three }))).when(submit("guest-message:4", "one more")).thenRejects(RejectionCode.guestMessageLimit);
    const thread = sharedThread({ guest, messages: three });
    const history = given(existing(thread)).when(cmd("thread.guest-message.dismiss", { threadId: A, guestMessageId: "guest-message:2" })).thenHistory();
    const state = given(...history).when(submit("guest-message:4", "one more")).then([
      threadEvent(
        "thread.guest-share-updated",
        after(thread, share({ guest, messages: [three[0]!, { ...three[1]!, status: "dismissed", decidedAt: NOW }, three[2]!, pendingMessage("guest-message:4", "one more")] })),
      ),
    ]);
    expect(state.threads.get(A)?.guestShare?.messages.filter((m) => m.status === "pending")).toHaveLength(3);
  });

  it("dismisses only a pending message, even after the share closed", () => {
    const thread = sharedThread({ guest, closedAt: NOW, messages: [pendingMessage("guest-message:1")] });
    given(existing(thread))
      .when(cmd("thread.guest-message.dismiss", { threadId: A, guestMessageId: "guest-message:1" }))
      .then([threadEvent("thread.guest-share-updated", after(thread, { ...thread.guestShare!, messages: [{ ...pendingMessage("guest-message:1"), status: "dismissed", decidedAt: NOW }] }))]);
    given(existing(sharedThread({ guest, messages: [{ ...pendingMessage("guest-message:1"), status: "dismissed", decidedAt: NOW }] })))
      .when(cmd("thread.guest-message.dismiss", { threadId: A, guestMessageId: "guest-message:1" }))
      .thenRejects(RejectionCode.guestMessageNotPending);
    given(existing(sharedThread({ guest }))).when(cmd("thread.guest-message.dismiss", { threadId: A, guestMessageId: "guest-message:9" })).thenRejects(RejectionCode.guestMessageNotFound);
  });
});

describe("guest message attachments", () => {
  const file = (id: string, fields: Partial<GuestAttachment> = {}): GuestAttachment => ({ id, name: `${id}.png`, type: "image/png", size: 10, sha256: "c".repeat(64), ...fields });
  const withFiles = (attachments: GuestAttachment[]) => cmd("thread.guest-message.submit", { threadId: A, shareId: SHARE, browserHash: BROWSER, guestMessageId: "guest-message:1", text: "see these", attachments });

  it("records up to 4 attachments of up to 10 MiB each, described only", () => {
    const thread = sharedThread({ guest });
    const four = [file("a1", { size: GUEST_ATTACHMENT_MAX_BYTES }), file("a2", { type: "application/pdf", name: "spec.pdf" }), file("a3", { type: "text/plain" }), file("a4")];
    expect(four).toHaveLength(GUEST_ATTACHMENT_LIMIT);
    given(existing(thread))
      .when(withFiles(four))
      .then([threadEvent("thread.guest-share-updated", after(thread, share({ guest, messages: [{ ...pendingMessage("guest-message:1", "see these"), attachments: four }] })))]);
  });

  it("refuses a fifth attachment, one of 10 MiB and a byte, and a type not accepted", () => {
    const thread = sharedThread({ guest });
    const five = ["a1", "a2", "a3", "a4", "a5"].map((id) => file(id));
    given(existing(thread)).when(withFiles(five)).thenRejects(RejectionCode.invalidGuestAttachment);
    given(existing(thread)).when(withFiles([file("a1", { size: GUEST_ATTACHMENT_MAX_BYTES + 1 })])).thenRejects(RejectionCode.invalidGuestAttachment);
    given(existing(thread)).when(withFiles([file("a1", { type: "image/svg+xml" })])).thenRejects(RejectionCode.invalidGuestAttachment);
  });

  it("names each attachment and its file to the agent when the owner sends the message", () => {
    const thread: AppThread = { ...aProviderThread(A, "steerable"), guestShare: share({ guest, messages: [{ ...pendingMessage("guest-message:1"), attachments: [file("a1"), file("a2", { name: "notes.txt", type: "text/plain" })] }] }) };
    const state = given(existing(thread))
      .when(cmd("message.dispatch", { threadId: A, text: "try the other branch", guestMessageId: "guest-message:1", guestAttachmentsDir: "/state/guest-attachments/s1", runId: "run:g" }))
      .thenHistory();
    const item = fold(...state).turnItems.get(A)?.[0];
    expect(item?.type === "user_message" ? item.text : null).toBe(
      "Message from guest Ada, sent by the owner:\n\ntry the other branch\n\nAttachments:\n- a1.png: /state/guest-attachments/s1/a1\n- notes.txt: /state/guest-attachments/s1/a2",
    );
  });
});

describe("message.dispatch with guestMessageId", () => {
  const withShare = (thread: AppThread, messages = [pendingMessage("guest-message:1")]): AppThread => ({ ...thread, guestShare: share({ guest, messages }) });

  it("sends the guest's text prefixed as spec 004 says; the run names the guest message, which is marked sent", () => {
    const thread = withShare(aProviderThread(A, "steerable"));
    const state = given(existing(thread)).when(cmd("message.dispatch", { threadId: A, text: "try the other branch", guestMessageId: "guest-message:1", runId: "run:g" })).thenIncludes(
      threadEvent("thread.guest-share-updated", { ...thread, updatedAt: NOW, guestShare: share({ guest, messages: [{ ...pendingMessage("guest-message:1"), status: "sent", decidedAt: NOW, runId: "run:g" }] }) }),
    );
    expect(state.runs.get("run:g")?.guestMessageId).toBe("guest-message:1");
    const item = state.turnItems.get(A)?.[0];
    expect(item?.type === "user_message" ? item.text : null).toBe("Message from guest Ada, sent by the owner:\n\ntry the other branch");
  });

  it("keeps the queue the send leaves on the thread record", () => {
    const thread = withShare(aProviderThread(A, "plain"));
    const busy = aRun(thread, { id: "run:0", messageId: "message:0" });
    const history = given(existing(thread), runCreated(busy), itemEvent(aUserMessage(A, "run:0", 0, "turn-item:0", "message:0", "first")))
      .when(cmd("message.dispatch", { threadId: A, text: "try the other branch", guestMessageId: "guest-message:1", runId: "run:g" }))
      .thenHistory();
    expect(history.at(-1)?.type).toBe("thread.guest-share-updated");
    const state = fold(...history);
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:g", held: false }]);
    expect(state.threads.get(A)?.guestShare?.messages[0]).toMatchObject({ status: "sent", runId: "run:g" });
  });

  it("refuses another text, a dismissed message and an unknown one", () => {
    const thread = withShare(aProviderThread(A, "steerable"));
    given(existing(thread)).when(cmd("message.dispatch", { threadId: A, text: "something else", guestMessageId: "guest-message:1" })).thenRejects(RejectionCode.invalidGuestMessage);
    given(existing(withShare(aProviderThread(A, "steerable"), [{ ...pendingMessage("guest-message:1"), status: "dismissed", decidedAt: NOW }])))
      .when(cmd("message.dispatch", { threadId: A, text: "try the other branch", guestMessageId: "guest-message:1" }))
      .thenRejects(RejectionCode.guestMessageNotPending);
    given(existing(thread)).when(cmd("message.dispatch", { threadId: A, text: "try the other branch", guestMessageId: "guest-message:9" })).thenRejects(RejectionCode.guestMessageNotFound);
  });
});
