import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { NormalizedProviderEvent, ProviderItem, UsageEvent } from "../../contracts/providerEvents.js";
import { ProviderError } from "../adapter.js";
import type { ProviderErrorCode, ProviderSessionRuntime } from "../adapter.js";
import type { DriverContractHarness, DriverContractSubject } from "./testSuiteHarness.js";
import { ProviderEventRecorder } from "./testSuiteHarness.js";

export type { DriverContractHarness, DriverContractSubject } from "./testSuiteHarness.js";
export { ProviderEventRecorder } from "./testSuiteHarness.js";

/**
 * THE contract every provider driver passes (STYLE rule 3; the adapter
 * contract in ../adapter.ts). A driver's test file calls this with a harness
 * that opens a session on the driver's fake (testSuiteHarness.ts); each case
 * gets a fresh session, stopped and disposed after it.
 */
export function describeDriverContract(name: string, harness: DriverContractHarness): void {
  describe(`provider driver contract: ${name}`, () => {
    let recorder: ProviderEventRecorder;
    let subject: DriverContractSubject;
    let session: ProviderSessionRuntime;

    beforeEach(async () => {
      recorder = new ProviderEventRecorder();
      subject = await harness.open(recorder);
      session = subject.session;
    });

    afterEach(async () => {
      await session.stop();
      await subject.dispose();
    });

    it("opens a session that stays quiet until a turn starts", () => {
      expect(recorder.events).toEqual([]);
      expect(subject.capabilities.runtimeModes.length).toBeGreaterThan(0);
    });

    it("a turn's events arrive in order: turn.started first, its items, turn.completed last, all with the turn's runId", async () => {
      for (const runId of ["run-1", "run-2"]) {
        const before = recorder.events.length;
        await subject.startCompletingTurn(runId);
        const end = await recorder.turnEnd(runId);
        const turn = recorder.events.slice(before);
        expect(turn.every((event) => event.runId === runId), JSON.stringify(turn)).toBe(true);
        expect(turn[0]).toMatchObject({ type: "turn.started", runId });
        expect(turn.at(-1)).toEqual(end);
        expect(end).toEqual({ type: "turn.completed", runId, status: "completed", error: null });
        expect(turn.filter((event) => event.type === "turn.started")).toHaveLength(1);
        expect(turn.filter((event) => event.type === "turn.completed")).toHaveLength(1);
        expect(turn.some((event) => event.type === "item.completed")).toBe(true);
        expectNativeIds(turn[0]);
        expectCumulativeUsage(turn.filter((event): event is UsageEvent => event.type === "usage"));
      }
    });

    it("one turn at a time: starting another while one runs is turn_not_active", async () => {
      await subject.startOpenTurn("run-1");
      await expectProviderError(session.startTurn({ runId: "run-2", input: "another" }), "turn_not_active");
      expect(recorder.ofRun("run-2")).toEqual([]);
    });

    it("steer: the input joins the running turn, or `unsupported` when capabilities.steering is false", async () => {
      await subject.startOpenTurn("run-1");
      if (!offers(subject.capabilities, "steering")) {
        await expectProviderError(session.steerTurn({ runId: "run-1", input: STEER_TEXT }), "unsupported");
        expect(recorder.ofRun("run-1").some((event) => event.type === "turn.completed")).toBe(false);
        return;
      }
      await expectProviderError(session.steerTurn({ runId: "run-other", input: STEER_TEXT }), "turn_not_active");
      await session.steerTurn({ runId: "run-1", input: STEER_TEXT });
      await subject.finishSteeredTurn("run-1", STEER_TEXT);
      const end = await recorder.turnEnd("run-1");
      expect(end).toMatchObject({ status: "completed", error: null });
      expect(recorder.ofRun("run-1").filter((event) => event.type === "turn.completed")).toHaveLength(1);
      await expectProviderError(session.steerTurn({ runId: "run-1", input: "too late" }), "turn_not_active");
    });

    it("interrupt: the turn ends with turn.completed \"interrupted\", or `unsupported` when capabilities.interrupt is false", async () => {
      await subject.startOpenTurn("run-1");
      if (!offers(subject.capabilities, "interrupt")) {
        await expectProviderError(session.interruptTurn({ runId: "run-1" }), "unsupported");
        expect(recorder.ofRun("run-1").some((event) => event.type === "turn.completed")).toBe(false);
        return;
      }
      await session.interruptTurn({ runId: "run-1" });
      await subject.afterInterrupt("run-1");
      const end = await recorder.turnEnd("run-1");
      expect(end).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
      await expectProviderError(session.interruptTurn({ runId: "run-1" }), "turn_not_active");

      // The session takes the next turn, and nothing of the interrupted run follows its end.
      await subject.startCompletingTurn("run-2");
      await recorder.turnEnd("run-2");
      expect(recorder.ofRun("run-1").at(-1)).toEqual(end);
      expect(recorder.events.indexOf(end)).toBeLessThan(recorder.events.findIndex((event) => event.runId === "run-2"));
    });

    it("respond: answering an approval or a question lets the turn go on to its end", async () => {
      await subject.startAskingTurn("run-1");
      const asked = await recorder.item("run-1", isRequest, "approval_request or user_input_request");
      if (asked.item.kind !== "approval_request" && asked.item.kind !== "user_input_request") throw new Error("not a request");
      const requestId = asked.item.requestId;
      await expectProviderError(session.respondToRequest({ requestId: `${requestId}-unknown`, response: answerTo(asked.item) }), "request_not_found");
      await session.respondToRequest({ requestId, response: answerTo(asked.item) });
      await subject.afterAnswer("run-1");
      const end = await recorder.turnEnd("run-1");
      expect(end).toMatchObject({ status: "completed", error: null });
      expect(recorder.events.indexOf(asked)).toBeLessThan(recorder.events.indexOf(end));
      await expectProviderError(session.respondToRequest({ requestId, response: answerTo(asked.item) }), "request_not_found");
    });

    it("stop() ends a running turn \"interrupted\" as its last event, is idempotent, and no event follows it", async () => {
      await subject.startOpenTurn("run-1");
      await session.stop();
      expect(recorder.events.at(-1)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
      recorder.seal();
      await session.stop();
      await subject.afterStop?.();
      expect(recorder.late).toEqual([]);
    });

    it("after stop() every method rejects with session_closed", async () => {
      await subject.startCompletingTurn("run-1");
      await recorder.turnEnd("run-1");
      await session.stop();
      recorder.seal();
      await expectProviderError(session.startTurn({ runId: "run-2", input: "x" }), "session_closed");
      await expectProviderError(session.steerTurn({ runId: "run-2", input: "x" }), "session_closed");
      await expectProviderError(session.interruptTurn({ runId: "run-2" }), "session_closed");
      await expectProviderError(session.respondToRequest({ requestId: "any", response: { decision: "accept" } }), "session_closed");
      expect(recorder.late).toEqual([]);
    });
  });
}

/** The text a steer sends (the harness checks that it reached the fake). */
export const STEER_TEXT = "also say bye";

/** The session methods a capability record may leave out, by the flag that offers them. */
type OptionalMethod = "steering" | "interrupt";
const OPTIONAL_METHODS: { readonly [K in OptionalMethod]: keyof ProviderSessionRuntime } = {
  steering: "steerTurn",
  interrupt: "interruptTurn",
};

function offers(capabilities: ProviderCapabilities, flag: OptionalMethod): boolean {
  expect(typeof capabilities[flag], `capabilities.${flag} (offers ${OPTIONAL_METHODS[flag]})`).toBe("boolean");
  return capabilities[flag];
}

async function expectProviderError(promise: Promise<unknown>, code: ProviderErrorCode): Promise<void> {
  const outcome = await promise.then(
    () => "resolved",
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(ProviderError);
  expect(outcome).toMatchObject({ code });
}

function isRequest(item: ProviderItem): boolean {
  return item.kind === "approval_request" || item.kind === "user_input_request";
}

/** Loom's answer shapes (runtime-request.respond): accept an approval, answer every question. */
function answerTo(item: ProviderItem): unknown {
  if (item.kind === "approval_request") return { decision: "accept" };
  if (item.kind === "user_input_request") return { answers: Object.fromEntries(item.questions.map((question) => [question.id, ["yes"]])) };
  throw new Error(`not a request: ${item.kind}`);
}

/** Native ids are optional; when present they are non-empty strings. */
function expectNativeIds(event: NormalizedProviderEvent | undefined): void {
  if (event?.type !== "turn.started") throw new Error("the turn did not start with turn.started");
  for (const id of [event.nativeThreadId, event.nativeTurnId]) {
    if (id !== undefined) expect(id).toMatch(/\S/);
  }
}

/** Usage is cumulative for the turn: whole, non-negative counts that never go down. */
function expectCumulativeUsage(usage: readonly UsageEvent[]): void {
  let previous: UsageEvent | null = null;
  for (const event of usage) {
    for (const count of [event.inputTokens, event.outputTokens, event.cachedInputTokens ?? 0]) {
      expect(Number.isInteger(count) && count >= 0, JSON.stringify(event)).toBe(true);
    }
    expect(event.cachedInputTokens ?? 0).toBeLessThanOrEqual(event.inputTokens);
    if (event.costUsd !== undefined) expect(event.costUsd).toBeGreaterThanOrEqual(0);
    if (previous !== null) {
      expect(event.inputTokens).toBeGreaterThanOrEqual(previous.inputTokens);
      expect(event.outputTokens).toBeGreaterThanOrEqual(previous.outputTokens);
    }
    previous = event;
  }
}
