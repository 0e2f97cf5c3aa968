import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * t3_thread_read paging on a thread too big for one result (spec 000: about
 * 30,000 characters). Outside clients start at the oldest item and follow
 * hasMore; an agent in a thread starts at the newest and follows earlierPosition.
 */

const SAYS = 24;
const LIMIT = 30_000;

interface ReadItem {
  position: number;
  type: string;
  text: string;
  truncated: boolean;
}
interface ReadResult {
  items: ReadItem[];
  earlierPosition: number | null;
  nextPosition: number | null;
  hasMore: boolean;
  truncated: boolean;
}

let h: LoomHarness;
let bigThreadId: string;
let messagePositions: number[];
let asThread: LoomMcpClient;

beforeAll(async () => {
  h = await LoomHarness.start();
  const says = Array.from({ length: SAYS }, (_, i) => ({ say: `say ${i}: ${"abcdefghij".repeat(200)}` }));
  const big = await h.createThread({ title: "Big", prompt: script(...says) });
  expect((await h.waitForEnd(big.runId!)).status).toBe("completed");
  bigThreadId = big.threadId;
  messagePositions = h.items(bigThreadId).filter((item) => item.type === "user_message" || item.type === "assistant_message").map((item) => item.position);
  // A thread-scoped caller: an agent credential for another thread.
  const reader = await h.createThread({ title: "Reader" });
  const credential = await h.server.credentials.issue({
    environmentId: h.server.environmentId,
    threadId: reader.threadId,
    providerInstanceId: "scripted",
    providerSessionId: "provider-session:reader",
  });
  asThread = await h.connect(credential.token, "reader");
});
afterAll(async () => {
  await h.close();
});

/** Read once, checking the result stays within the budget. */
async function read(client: LoomMcpClient, args: Record<string, unknown>): Promise<ReadResult> {
  const outcome = await client.call("t3_thread_read", { threadId: bigThreadId, ...args });
  expect(outcome.isError).toBe(false);
  expect(JSON.stringify(outcome.structured).length).toBeLessThanOrEqual(LIMIT);
  const result = outcome.structured as unknown as ReadResult;
  expect(result.items.length).toBeGreaterThan(0);
  return result;
}

function increasing(positions: number[]): boolean {
  return positions.every((p, i) => i === 0 || p > positions[i - 1]!);
}

describe("t3_thread_read paging", () => {
  it("has more message items than fit one result", () => {
    expect(messagePositions).toHaveLength(SAYS + 1);
  });

  it("starts an owner read at the oldest item and reaches the end through nextPosition", async () => {
    const first = await read(h.owner, {});
    expect(first.items[0]).toMatchObject({ position: 0, type: "user_message", truncated: true });
    expect(first.truncated).toBe(true);
    expect(first.earlierPosition).toBeNull();
    expect(first.hasMore).toBe(true);
    expect(first.items.length).toBeLessThan(messagePositions.length);

    const seen = first.items.map((item) => item.position);
    let page = first;
    let pages = 1;
    while (page.hasMore) {
      page = await read(h.owner, { afterPosition: page.nextPosition });
      expect(page.earlierPosition).not.toBeNull();
      seen.push(...page.items.map((item) => item.position));
      pages += 1;
      expect(pages).toBeLessThan(10);
    }
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual(messagePositions);
    expect(page.items[page.items.length - 1]!.text).toMatch(new RegExp(`^say ${SAYS - 1}: `));
  });

  it("starts a thread-scoped read at the newest items and reaches the oldest through earlierPosition", async () => {
    const newest = await read(asThread, {});
    expect(newest.hasMore).toBe(false);
    expect(newest.earlierPosition).not.toBeNull();
    expect(newest.items[newest.items.length - 1]!.position).toBe(messagePositions[messagePositions.length - 1]);
    expect(newest.items[0]!.position).toBe(newest.earlierPosition);

    const seen = newest.items.map((item) => item.position);
    let page = newest;
    let pages = 1;
    while (page.earlierPosition !== null) {
      page = await read(asThread, { beforePosition: page.earlierPosition });
      seen.unshift(...page.items.map((item) => item.position));
      pages += 1;
      expect(pages).toBeLessThan(10);
    }
    expect(seen).toEqual(messagePositions);
    expect(increasing(seen)).toBe(true);
    expect(page.items[0]).toMatchObject({ position: 0, type: "user_message" });
  });

  it("starts any read at the oldest item with afterPosition -1 and honours limit", async () => {
    const fromStart = await read(asThread, { afterPosition: -1, limit: 3 });
    expect(fromStart.items.map((item) => item.position)).toEqual(messagePositions.slice(0, 3));
    expect(fromStart.hasMore).toBe(true);
    expect(fromStart.nextPosition).toBe(messagePositions[2]);
    const small = await read(h.owner, { afterPosition: 0, maxChars: 5_000 });
    expect(JSON.stringify(small).length).toBeLessThanOrEqual(5_000);
    expect(small.items.map((item) => item.position)).toEqual([messagePositions[1]]);
    expect(small.hasMore).toBe(true);
  });
});
