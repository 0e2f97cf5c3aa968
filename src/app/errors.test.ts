import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FAILURES, FailureCode } from "../contracts/failures.js";
import { REJECTION_CODES } from "../core/rejections.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { StoreError, StoreErrorCode } from "../store/storeErrors.js";
import { AppError, FAILURE_OF_REJECTION, GENERIC_FAILURE_MESSAGE, SHUTTING_DOWN_MESSAGE, errorOfRejection, isUnexpectedFailure, toFailure } from "./errors.js";

describe("the failure table", () => {
  it("has the 14 codes of spec 000, Loom's 3 delegation guards, budget_exceeded, unsupported (the wire's), 3 workspace failures, workflow_not_found and workflow_running, each with a retryable flag", () => {
    expect(Object.keys(FailureCode)).toEqual([
      "capability_denied",
      "parent_not_active",
      "provider_unavailable",
      "model_unavailable",
      "runtime_mode_escalation_denied",
      "interaction_mode_escalation_denied",
      "task_not_found",
      "task_not_cancellable",
      "thread_not_found",
      "run_not_found",
      "thread_not_sendable",
      "thread_not_interruptible",
      "invalid_request",
      "orchestration_error",
      "delegation_depth_exceeded",
      "active_children_exceeded",
      "spawn_budget_exceeded",
      "budget_exceeded",
      "unsupported",
      "workspace_unavailable",
      "workspace_conflict",
      "workspace_busy",
      "workflow_not_found",
      "workflow_running",
    ]);
    expect(Object.keys(FAILURES).sort()).toEqual(Object.keys(FailureCode).sort());
    for (const info of Object.values(FAILURES)) expect(typeof info.retryable).toBe("boolean");
    expect(FAILURES.invalid_request.retryable).toBe(false);
    expect(FAILURES.orchestration_error.retryable).toBe(true);
  });
});

describe("toFailure", () => {
  it("keeps an AppError's code, message, retryability and details", () => {
    const error = new AppError("provider_unavailable", "codex is not installed", { details: { providerInstanceId: "codex" } });
    expect(toFailure(error)).toEqual({ code: "provider_unavailable", message: "codex is not installed", retryable: true, details: { providerInstanceId: "codex" } });
    expect(toFailure(new AppError("task_not_found", "no task t"))).toEqual({ code: "task_not_found", message: "no task t", retryable: false });
  });

  it("turns a zod error into invalid_request listing each issue's path", () => {
    const parsed = z.object({ task: z.string(), target: z.object({ model: z.string() }) }).safeParse({ task: 1, target: { model: null } });
    expect(parsed.success).toBe(false);
    const failure = toFailure(parsed.error);
    expect(failure.code).toBe("invalid_request");
    expect(failure.retryable).toBe(false);
    expect(failure.message).toMatch(/^invalid request: task: .*expected string.*; target\.model: /);
  });

  it("hides anything else behind orchestration_error with no message or stack", () => {
    for (const thrown of [new TypeError("cannot read x of undefined at /home/me/secret.ts:1"), "a string", { weird: true }, null, undefined]) {
      const failure = toFailure(thrown);
      expect(failure).toEqual({ code: "orchestration_error", message: GENERIC_FAILURE_MESSAGE, retryable: true });
      expect(isUnexpectedFailure(thrown)).toBe(true);
    }
  });

  it("says a call cut off by the store closing is the server shutting down, retryable, and not a fault to log", async () => {
    const store = new MemoryEventStore();
    await store.close();
    const thrown: unknown = await store.readAll(0).then(() => null, (error: unknown) => error);
    expect(thrown).toBeInstanceOf(StoreError);
    expect(toFailure(thrown)).toEqual({ code: "orchestration_error", message: SHUTTING_DOWN_MESSAGE, retryable: true });
    expect(isUnexpectedFailure(thrown)).toBe(false);
    // Any other store failure stays unexpected: hidden behind the generic message and logged.
    const other = new StoreError(StoreErrorCode.notSerializable, "event data has no JSON form");
    expect(toFailure(other).message).toBe(GENERIC_FAILURE_MESSAGE);
    expect(isUnexpectedFailure(other)).toBe(true);
  });
});

describe("rejections to failures", () => {
  it("maps every decider rejection code to a wire failure code", () => {
    expect(Object.keys(FAILURE_OF_REJECTION).sort()).toEqual([...REJECTION_CODES].sort());
    for (const code of Object.values(FAILURE_OF_REJECTION)) expect(Object.values(FailureCode)).toContain(code);
  });

  it("keeps the decider's code in the message and on the error", () => {
    const error = errorOfRejection({ code: "thread_deleted", message: "thread t was deleted" });
    expect(error.code).toBe("thread_not_found");
    expect(error.message).toBe("thread_deleted: thread t was deleted");
    expect(error.rejectionCode).toBe("thread_deleted");
  });

  it("treats a code this build does not know (an older stored receipt) as orchestration_error", () => {
    expect(errorOfRejection({ code: "retired_code", message: "gone" }).code).toBe("orchestration_error");
  });
});
