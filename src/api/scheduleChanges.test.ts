import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";

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
    const abort = new AbortController();
    const res = await fetch(`${h.server.url}/api/schedules/changes`, { headers: { authorization: `Bearer ${h.ownerToken}` }, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    /** Read until the stream holds `count` changed events; their sequences. */
    const changed = async (count: number): Promise<number[]> => {
      for (;;) {
        const events = [...text.matchAll(/event: changed\ndata: (\{.*\})\n\n/g)].map((m) => (JSON.parse(m[1]!) as { sequence: number }).sequence);
        if (events.length >= count) return events;
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`stream ended: ${text}`);
        text += chunk.value;
      }
    };
    // The stream is open (its first comment arrived) before anything changes.
    while (!text.includes(": scheduled task changes")) text += (await reader.read()).value ?? "";

    const created = await owner("POST", "/api/schedules", { title: "Watched", prompt: "Say hello.", trigger: { type: "interval", everyMs: 3_600_000 } });
    expect(created.status).toBe(201);
    const taskId = ((await created.json()) as { scheduledTaskId: string }).scheduledTaskId;
    const [saved] = await changed(1);
    expect(saved).toBeGreaterThan(0);
    expect((await owner("DELETE", `/api/schedules/${encodeURIComponent(taskId)}`)).status).toBe(200);
    const [, deleted] = await changed(2);
    expect(deleted).toBeGreaterThan(saved!);
    abort.abort();
  });
});
