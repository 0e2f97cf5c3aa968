import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateStep, launchParent, onlyTask, startDelegationHarness, systemMessages, toolResults, VERDICT_SCHEMA as VERDICT } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";

/**
 * Structured results (docs/delegation.md): delegate_task with an outputSchema, over real
 * MCP, a parent on scripted instance `a` and the child on `b`. The child's
 * final answer is validated with the JSON Schema; a mismatch gets one repair
 * turn; the outcome is read back from task_status and Loom's own state.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

async function delegateWithSchema(child: readonly Record<string, unknown>[], key: string) {
  const parent = await launchParent(h, [delegateStep(child, { mode: "wait", clientRequestId: key, outputSchema: VERDICT }, "t"), { say: "done" }]);
  const waited = await h.waitViaMcp(parent.threadId, parent.runId);
  expect(waited.status).toBe("completed");
  const [call] = toolResults<DelegateTaskResult>(h, parent.threadId, "delegate_task");
  return { parent, call: call!, task: onlyTask(h, parent.threadId) };
}

describe("structured results", () => {
  it("returns the validated JSON value of a matching answer", async () => {
    const { call, task } = await delegateWithSchema([{ say: '{"winner": 2, "rationale": "fastest"}' }], "valid");
    expect(call.result).toMatchObject({ status: "completed", structuredResult: { winner: 2, rationale: "fastest" }, structuredResultError: null });
    expect(task.schemaRepairRunId).toBeNull();
    // The child was told the schema after its brief.
    const [message] = h.items(task.childThreadId).filter((item) => item.type === "user_message");
    expect(message).toMatchObject({ text: expect.stringContaining('"additionalProperties": false') });
    expect(h.runs(task.childThreadId)).toHaveLength(1);
  });

  it("accepts a fenced JSON answer", async () => {
    const { call } = await delegateWithSchema([{ say: 'Here it is:\n```json\n{"winner": 0, "rationale": "only one"}\n```' }], "fenced");
    expect(call.result.structuredResult).toEqual({ winner: 0, rationale: "only one" });
  });

  it("gives a mismatching answer one repair turn with the errors, then takes the fixed answer", async () => {
    const { call, task } = await delegateWithSchema(
      [{ say: '{"winner": "two"}' }, { next: [{ say: '{"winner": 1, "rationale": "fixed"}' }] }],
      "fixed",
    );
    expect(call.result).toMatchObject({ status: "completed", structuredResult: { winner: 1, rationale: "fixed" }, structuredResultError: null });
    expect(task.schemaRepairRunId).not.toBeNull();
    const repair = systemMessages(h, task.childThreadId);
    expect(repair).toHaveLength(1);
    expect(repair[0]!.text).toContain("/winner must be integer");
    expect(repair[0]!.text).toContain("must have required property 'rationale'");
    expect(h.runs(task.childThreadId).map((run) => run.status)).toEqual(["completed", "completed"]);
  });

  it("reports the errors when the repaired answer is still wrong", async () => {
    const { call, task } = await delegateWithSchema([{ say: "not json at all" }, { next: [{ say: '{"winner": -1, "rationale": "x", "extra": true}' }] }], "twice");
    expect(call.result.structuredResult).toBeUndefined();
    expect(call.result.structuredResultError).toEqual({
      message: "the answer and its one repair did not match the output schema",
      errors: ["(root) must NOT have additional properties (extra)", "/winner must be >= 0"],
    });
    expect(h.runs(task.childThreadId)).toHaveLength(2);
    // task_status reads the same outcome.
    const status = await h.owner.ok("task_status", { taskId: task.taskId });
    expect(status).toMatchObject({ structuredResultError: { errors: expect.arrayContaining(["/winner must be >= 0"]) } });
  });

  it("refuses a schema that does not compile, recording nothing", async () => {
    const parent = await launchParent(h, [
      { call: "delegate_task", args: { task: "x", outputSchema: { type: "nonsense-type" } }, as: "t" },
      { say: "after" },
    ]);
    await h.waitViaMcp(parent.threadId, parent.runId);
    const [call] = toolResults<{ error: { code: string; message: string } }>(h, parent.threadId, "delegate_task");
    expect(call!.result.error.code).toBe("invalid_request");
    expect(call!.result.error.message).toContain("outputSchema is not a usable JSON Schema");
    expect([...h.state.tasks.values()].filter((task) => task.parentThreadId === parent.threadId)).toHaveLength(0);
  });
});
