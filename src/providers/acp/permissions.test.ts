import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PermissionOption, RequestPermissionRequest } from "@agentclientprotocol/sdk/unstable";
import type { ProviderSessionRuntime } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup, waitForEvent } from "../../testkit/acpAgentHarness.js";
import { createAcpDriver } from "./driver.js";
import { allowOutcome, approvalItem, approvesByItself, permissionOutcome } from "./permissions.js";

const OPTIONS: PermissionOption[] = [
  { optionId: "once", name: "Allow", kind: "allow_once" },
  { optionId: "always", name: "Always", kind: "allow_always" },
  { optionId: "no", name: "Reject", kind: "reject_once" },
];

describe("permissions (pure)", () => {
  it("maps Loom decisions onto the agent's options", () => {
    expect(permissionOutcome("r", OPTIONS, { decision: "accept" })).toEqual({ outcome: { outcome: "selected", optionId: "once" } });
    expect(permissionOutcome("r", OPTIONS, { decision: "accept_for_session" })).toEqual({ outcome: { outcome: "selected", optionId: "always" } });
    expect(permissionOutcome("r", OPTIONS, { decision: "decline" })).toEqual({ outcome: { outcome: "selected", optionId: "no" } });
    expect(permissionOutcome("r", OPTIONS, { decision: "cancel" })).toEqual({ outcome: { outcome: "cancelled" } });
    expect(permissionOutcome("r", OPTIONS, { dismissed: true })).toEqual({ outcome: { outcome: "cancelled" } });
    // Falls back to the other kind of the same polarity, else cancels.
    expect(permissionOutcome("r", [OPTIONS[1]!], { decision: "accept" })).toEqual({ outcome: { outcome: "selected", optionId: "always" } });
    expect(permissionOutcome("r", [OPTIONS[0]!], { decision: "decline" })).toEqual({ outcome: { outcome: "cancelled" } });
    expect(allowOutcome([OPTIONS[2]!])).toEqual({ outcome: { outcome: "cancelled" } });
  });

  it("rejects a response of another shape with a typed error", () => {
    expect(() => permissionOutcome("r", OPTIONS, { answers: { q1: ["x"] } })).toThrow(expect.objectContaining({ name: "ProviderError", code: "protocol_error" }));
    expect(() => permissionOutcome("r", OPTIONS, "yes")).toThrow(/respond with \{ decision \}/);
  });

  it("answers by itself only where the runtime mode allows", () => {
    expect(approvesByItself("full-access", "execute")).toBe(true);
    expect(approvesByItself("auto-accept-edits", "edit")).toBe(true);
    expect(approvesByItself("auto-accept-edits", "execute")).toBe(false);
    expect(approvesByItself("auto-accept-edits", null)).toBe(false);
    expect(approvesByItself("approval-required", "read")).toBe(false);
  });

  it("builds an approval item from the request and what the turn knows of the tool call", () => {
    const request: RequestPermissionRequest = { sessionId: "s", toolCall: { toolCallId: "t1" }, options: OPTIONS };
    expect(approvalItem("acp-permission-1", request, { title: "Run rm -rf build", kind: "execute", rawInput: { command: "rm -rf build" } })).toEqual({
      kind: "approval_request",
      requestId: "acp-permission-1",
      requestKind: "command",
      title: "Run rm -rf build",
      detail: "rm -rf build\noptions: Allow, Always, Reject",
    });
    const edit: RequestPermissionRequest = { sessionId: "s", toolCall: { toolCallId: "t2", title: "Write a.txt", kind: "edit", locations: [{ path: "/w/a.txt" }] }, options: OPTIONS };
    expect(approvalItem("r2", edit, null)).toMatchObject({ requestKind: "file-change", title: "Write a.txt", detail: "/w/a.txt\noptions: Allow, Always, Reject" });
  });
});

describe("permissions through a real ACP agent", () => {
  let agent: ScriptedAgentSetup;
  let session: ProviderSessionRuntime | null = null;

  beforeEach(() => {
    agent = scriptedAgentSetup();
  });

  afterEach(async () => {
    await session?.stop();
    agent.close();
  });

  async function open(runtimeMode: "approval-required" | "auto-accept-edits" | "full-access") {
    const events: NormalizedProviderEvent[] = [];
    session = await createAcpDriver().openSession({
      instance: agent.instance(),
      threadId: "thread:1",
      providerSessionId: "ps:1",
      cwd: agent.dir,
      runtimeMode,
      interactionMode: "default",
      model: null,
      mcp: null,
      onEvent: (event) => events.push(event),
    });
    return { session, events };
  }

  const ASK = acpScript(
    { toolCall: { toolCallId: "t1", title: "touch x", kind: "execute", status: "pending", rawInput: { command: "touch x" } } },
    { permission: { toolCall: { toolCallId: "t1" } }, as: "p" },
    { chunk: "permission: {{p}}" },
  );

  it("approval-required: the request becomes an approval item; the owner's answer reaches the agent", async () => {
    const { session, events } = await open("approval-required");
    await session.startTurn({ runId: "run-1", input: ASK });
    const request = await waitForEvent(events, (event) => event.type === "item.completed" && event.item.kind === "approval_request", "the approval item");
    expect(request).toMatchObject({ itemId: "request:acp-permission-1", item: { kind: "approval_request", requestId: "acp-permission-1", requestKind: "command", title: "touch x" } });
    await session.respondToRequest({ requestId: "acp-permission-1", response: { decision: "decline" } });
    await waitForEvent(events, (event) => event.type === "turn.completed", "the end of the turn");
    expect(events).toContainEqual(expect.objectContaining({ item: { kind: "assistant_message", text: 'permission: {"outcome":"selected","optionId":"reject"}' } }));
    // An answered request is gone.
    await expect(session.respondToRequest({ requestId: "acp-permission-1", response: { decision: "accept" } })).rejects.toMatchObject({ code: "request_not_found" });
  });

  it("a response of the wrong shape is refused and the request stays open", async () => {
    const { session, events } = await open("approval-required");
    await session.startTurn({ runId: "run-1", input: ASK });
    await waitForEvent(events, (event) => event.type === "item.completed" && event.item.kind === "approval_request", "the approval item");
    await expect(session.respondToRequest({ requestId: "acp-permission-1", response: { answers: {} } })).rejects.toMatchObject({ code: "protocol_error" });
    await session.respondToRequest({ requestId: "acp-permission-1", response: { decision: "accept" } });
    await waitForEvent(events, (event) => event.type === "turn.completed", "the end of the turn");
    expect(events).toContainEqual(expect.objectContaining({ item: { kind: "assistant_message", text: 'permission: {"outcome":"selected","optionId":"allow"}' } }));
  });

  it("full-access: Loom allows by itself and records no approval item", async () => {
    const { session, events } = await open("full-access");
    await session.startTurn({ runId: "run-1", input: ASK });
    await waitForEvent(events, (event) => event.type === "turn.completed", "the end of the turn");
    expect(events.some((event) => event.type === "item.completed" && event.item.kind === "approval_request")).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ item: { kind: "assistant_message", text: 'permission: {"outcome":"selected","optionId":"allow"}' } }));
  });

  it("an interrupt answers an open permission request cancelled", async () => {
    const { session, events } = await open("approval-required");
    await session.startTurn({ runId: "run-1", input: acpScript({ permission: { toolCall: { toolCallId: "t9", title: "deploy", kind: "other" } }, as: "p" }, { waitForCancel: true }) });
    await waitForEvent(events, (event) => event.type === "item.completed" && event.item.kind === "approval_request", "the approval item");
    await session.interruptTurn({ runId: "run-1" });
    const end = await waitForEvent(events, (event) => event.type === "turn.completed", "the end of the turn");
    expect(end).toMatchObject({ status: "interrupted" });
    await expect(session.respondToRequest({ requestId: "acp-permission-1", response: { decision: "accept" } })).rejects.toMatchObject({ code: "request_not_found" });
  });
});
