import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";

/** GET /api/orchestration/shell-snapshot is paged: pinned first, then newest first, a cursor and the sequence on every page. */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

interface Page {
  snapshotSequence: number;
  threads: { id: string; title: string; pinnedRank: number | null }[];
  nextCursor: string | null;
  total: number;
}

async function get(query: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${h.server.url}/api/orchestration/shell-snapshot${query}`, { headers: { authorization: `Bearer ${h.ownerToken}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("paged shell snapshot", () => {
  it("pages through pinned then newest-first threads with a cursor, each page at the current sequence", async () => {
    const created: string[] = [];
    for (const title of ["S1", "S2", "S3", "S4", "S5"]) created.push((await h.createThread({ title })).threadId);
    expect((await h.dispatch("thread.pin", { threadId: created[1] })).status).toBe(200);

    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const answer = await get(`?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(answer.status).toBe(200);
      const page = answer.body as unknown as Page;
      expect(page.snapshotSequence).toBe(h.state.lastSequence);
      expect(page.threads.length).toBeLessThanOrEqual(2);
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(pages.flatMap((p) => p.threads.map((t) => t.title))).toEqual(["S2", "S5", "S4", "S3", "S1"]);
    expect(pages.map((p) => p.total)).toEqual([5, 5, 5]);

    const first = (await get("")).body as unknown as Page;
    expect(first.threads.map((t) => t.title)).toEqual(["S2", "S5", "S4", "S3", "S1"]);
    expect(first.nextCursor).toBeNull();
  });

  it("refuses a bad cursor or limit with 400 invalid_request", async () => {
    for (const query of ["?cursor=garbage", "?limit=0", "?limit=1001", "?limit=abc"]) {
      const answer = await get(query);
      expect({ query, status: answer.status, code: (answer.body.error as { code: string }).code }).toEqual({ query, status: 400, code: "invalid_request" });
    }
  });
});
