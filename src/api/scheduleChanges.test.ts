import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";
import { ScheduleChangeStream } from "../testkit/scheduleChangeStream.js";

/**
 * `GET /api/schedules/changes` over real HTTP to the real server: owner only,
 * and a `changed` server-sent event after each commit that saves or deletes a
 * scheduled task (docs/schedules.md).
 */

let h: LoomHarness;

beforeAll(async () => {
  h = await LoomHarness.start();
});

afterAll(async () => {
  await h.close();
});

const owner = (method: string, path: string, body?: unknown) =>
  fetch(`${h.server.url}${path}`, { method, headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe("the scheduled task change stream", () => {
  it("refuses a request without the owner's token", async () => {
    const res = await fetch(`${h.server.url}/api/schedules/changes`);
    expect(res.status).toBe(401);
  });

  it("sends a changed event, with the commit's sequence, when a task is saved and when it is deleted", async () => {
    const stream = await ScheduleChangeStream.open(h.server.url, h.ownerToken);
    try {
      const created = await owner("POST", "/api/schedules", { title: "Watched", prompt: "Say hello.", trigger: { type: "interval", everyMs: 3_600_000 } });
      expect(created.status).toBe(201);
      const taskId = ((await created.json()) as { scheduledTaskId: string }).scheduledTaskId;
      const [saved] = await stream.changed(1);
      expect(saved).toBeGreaterThan(0);
      expect((await owner("DELETE", `/api/schedules/${encodeURIComponent(taskId)}`)).status).toBe(200);
      const [, deleted] = await stream.changed(2);
      expect(deleted).toBeGreaterThan(saved!);
    } finally {
      stream.close();
    }
  });
});
