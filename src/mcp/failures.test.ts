import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GENERIC_FAILURE_MESSAGE, ORCHESTRATOR_MCP_FAILURES, OrchestratorMcpError, OrchestratorMcpFailureCode, toMcpFailure } from "./failures.js";

describe("OrchestratorMcpFailure table", () => {
  it("has the 14 codes of spec 000 plus Loom's 3 delegation guards, each with a retryable flag", () => {
    expect(Object.keys(OrchestratorMcpFailureCode)).toEqual([
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
    ]);
    expect(Object.keys(ORCHESTRATOR_MCP_FAILURES).sort()).toEqual(Object.keys(OrchestratorMcpFailureCode).sort());
    for (const info of Object.values(ORCHESTRATOR_MCP_FAILURES)) expect(typeof info.retryable).toBe("boolean");
    expect(ORCHESTRATOR_MCP_FAILURES.invalid_request.retryable).toBe(false);
    expect(ORCHESTRATOR_MCP_FAILURES.orchestration_error.retryable).toBe(true);
  });
});

describe("toMcpFailure", () => {
  it("keeps an OrchestratorMcpError's code, message, retryability and details", () => {
    const error = new OrchestratorMcpError("provider_unavailable", "codex is not installed", { details: { providerInstanceId: "codex" } });
    expect(toMcpFailure(error)).toEqual({ code: "provider_unavailable", message: "codex is not installed", retryable: true, details: { providerInstanceId: "codex" } });
    expect(toMcpFailure(new OrchestratorMcpError("task_not_found", "no task t"))).toEqual({ code: "task_not_found", message: "no task t", retryable: false });
  });

  it("turns a zod error into invalid_request listing each issue's path", () => {
    const parsed = z.object({ task: z.string(), target: z.object({ model: z.string() }) }).safeParse({ task: 1, target: { model: null } });
    expect(parsed.success).toBe(false);
    const failure = toMcpFailure(parsed.error);
    expect(failure.code).toBe("invalid_request");
    expect(failure.retryable).toBe(false);
    expect(failure.message).toMatch(/^invalid request: task: .*expected string.*; target\.model: /);
  });

  it("hides anything else behind orchestration_error with no message or stack", () => {
    for (const thrown of [new TypeError("cannot read x of undefined at /home/me/secret.ts:1"), "a string", { weird: true }, null, undefined]) {
      const failure = toMcpFailure(thrown);
      expect(failure).toEqual({ code: "orchestration_error", message: GENERIC_FAILURE_MESSAGE, retryable: true });
    }
  });
});
