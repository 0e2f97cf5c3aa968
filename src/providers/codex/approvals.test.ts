import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../adapter.js";
import { codexResult, loomRequestId, refusal, requestItem, requestItemId } from "./approvals.js";
import { CodexEventMapper } from "./codexEvents.js";
import type { ServerNotification, ServerRequest } from "./protocol.js";

/**
 * Server→client requests recorded from the real codex 0.171.0 (fixtures/)
 * as Loom items, and Loom's answers as the JSON-RPC results codex expects.
 */

interface Fixture {
  readonly messages: readonly { readonly id?: unknown; readonly method: string; readonly params: unknown }[];
}

/** The fixture's first server request, with the mapper state a session has when it arrives. */
function recordedRequest(name: string): { request: ServerRequest; mapper: CodexEventMapper } {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", `${name}.json`), "utf8")) as Fixture;
  const mapper = new CodexEventMapper();
  for (const message of fixture.messages) {
    if (message.id !== undefined) return { request: message as ServerRequest, mapper };
    mapper.map(message as ServerNotification, "run-1");
  }
  throw new Error(`${name} has no server request`);
}

function itemFor(name: string) {
  const { request, mapper } = recordedRequest(name);
  const itemId = (request.params as { itemId: string }).itemId;
  return { request, item: requestItem(request, mapper.startedItem(itemId)) };
}

function protocolError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ProviderError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error("no error");
}

describe("codex server requests → Loom items", () => {
  it("a command approval names the command and its directory; the request id is the JSON-RPC id", () => {
    const { request, item } = itemFor("command-approved");
    expect(request.id).toBe(0);
    expect(loomRequestId(request.id)).toBe("0");
    // The approval has its own item id: codex reuses call_3 for the command item that follows.
    expect(requestItemId(request.id)).toBe("request-0");
    expect(item).toEqual({
      kind: "approval_request",
      requestId: "0",
      requestKind: "command",
      title: "Run /bin/bash -lc 'echo hi > out.txt && cat out.txt'",
      detail: "in /workspace",
    });
  });

  it("a file-change approval takes the files from the item codex started before asking", () => {
    const { item } = itemFor("file-change-approved");
    expect(item).toEqual({ kind: "approval_request", requestId: "0", requestKind: "file-change", title: "Edit /workspace/notes.txt", detail: "add /workspace/notes.txt" });
  });

  it("a question becomes a user_input_request with codex's question ids", () => {
    const { item } = itemFor("user-input");
    expect(item).toEqual({ kind: "user_input_request", requestId: "0", questions: [{ id: "color", question: "Which color?" }] });
  });

  it("requests Loom does not answer are refused by the driver", () => {
    const request = { method: "item/tool/call", id: 7, params: { threadId: "t", turnId: "u", callId: "c", namespace: null, tool: "x", arguments: {} } } as unknown as ServerRequest;
    expect(requestItem(request, undefined)).toBeNull();
    expect(refusal(request)).toBe("loom does not handle item/tool/call");
  });
});

describe("Loom answers → codex results", () => {
  const command = recordedRequest("command-approved").request;
  const fileChange = recordedRequest("file-change-approved").request;
  const question = recordedRequest("user-input").request;

  it("maps Loom's four decisions onto codex's", () => {
    expect(codexResult(command, { decision: "accept" })).toEqual({ decision: "accept" });
    expect(codexResult(command, { decision: "accept_for_session" })).toEqual({ decision: "acceptForSession" });
    expect(codexResult(command, { decision: "decline" })).toEqual({ decision: "decline" });
    expect(codexResult(command, { decision: "cancel" })).toEqual({ decision: "cancel" });
    expect(codexResult(fileChange, { decision: "accept_for_session" })).toEqual({ decision: "acceptForSession" });
  });

  it("a dismissed approval cancels", () => {
    expect(codexResult(fileChange, { dismissed: true })).toEqual({ decision: "cancel" });
  });

  it("answers become codex's { answers: { id: { answers } } }; a dismissed question gets none", () => {
    expect(codexResult(question, { answers: { color: ["blue"] } })).toEqual({ answers: { color: { answers: ["blue"] } } });
    expect(codexResult(question, { dismissed: true })).toEqual({ answers: {} });
  });

  it("rejects a response of the wrong shape as a protocol error", () => {
    expect(protocolError(() => codexResult(command, { answers: { q: ["x"] } }))).toBe("protocol_error: request 0 is an approval: respond with a decision");
    expect(protocolError(() => codexResult(question, { decision: "accept" }))).toBe("protocol_error: request 0 is a question: respond with answers");
    expect(protocolError(() => codexResult(command, { decision: "maybe" }))).toMatch(/^protocol_error: request 0 expects/);
  });

  it("a permission grant gives what was asked for, for the turn or the session", () => {
    const request = {
      method: "item/permissions/requestApproval",
      id: 3,
      params: { threadId: "t", turnId: "u", itemId: "i", environmentId: null, startedAtMs: 0, cwd: "/w", reason: "needs network", permissions: { network: { enabled: true }, fileSystem: null } },
    } as unknown as ServerRequest;
    expect(requestItem(request, undefined)).toMatchObject({ kind: "approval_request", requestKind: "permission", requestId: "3" });
    expect(codexResult(request, { decision: "accept" })).toEqual({ permissions: { network: { enabled: true } }, scope: "turn" });
    expect(codexResult(request, { decision: "accept_for_session" })).toEqual({ permissions: { network: { enabled: true } }, scope: "session" });
    expect(codexResult(request, { decision: "decline" })).toEqual({ permissions: {}, scope: "turn" });
  });
});
