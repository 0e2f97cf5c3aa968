import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CredentialRecord } from "../../contracts/credentialRecords.js";
import { SqliteCredentialStore } from "./sqliteCredentialStore.js";

let dir: string;
let store: SqliteCredentialStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-credentials-"));
  store = SqliteCredentialStore.open(join(dir, "credentials.db"));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function thread(n: number, overrides: Partial<CredentialRecord> = {}): CredentialRecord {
  return {
    tokenHash: `hash-${n}`,
    credentialId: `mcp-credential:${n}`,
    kind: "thread",
    nodeId: "node-a",
    threadId: `thread:${n}`,
    providerSessionId: `session:${n}`,
    scope: { kind: "thread", threadId: `thread:${n}` },
    expiresAt: 10_000,
    lastUsedAt: 100,
    ended: null,
    ...overrides,
  };
}

describe("SqliteCredentialStore", () => {
  it("finds a credential by hash and by id, and nothing for an unknown one", async () => {
    await store.insert(thread(1));
    await store.insert(thread(2));
    expect(await store.findByHash("hash-1")).toEqual(thread(1));
    expect(await store.findById("mcp-credential:2")).toEqual(thread(2));
    expect(await store.findByHash("hash-3")).toBeNull();
    expect(await store.findById("mcp-credential:3")).toBeNull();
  });

  it("refuses a second thread credential with the same hash, and revives an owner token under the new node", async () => {
    await store.insert(thread(1));
    await store.insert(thread(1, { credentialId: "mcp-credential:other", nodeId: "node-b" }));
    expect((await store.findByHash("hash-1"))?.nodeId).toBe("node-a");

    const owner = thread(9, { kind: "owner", threadId: null, providerSessionId: null, expiresAt: null });
    await store.insert(owner);
    expect(await store.end({ kind: "owner" }, "revoked", 200)).toBe(1);
    await store.insert({ ...owner, nodeId: "node-b", lastUsedAt: 300 });
    expect(await store.findByHash("hash-9")).toMatchObject({ nodeId: "node-b", ended: null, lastUsedAt: 300 });
  });

  it("touches only forward and only live credentials", async () => {
    await store.insert(thread(1));
    await store.touch("hash-1", 500);
    await store.touch("hash-1", 400);
    expect((await store.findByHash("hash-1"))?.lastUsedAt).toBe(500);
    await store.end({ credentialId: "mcp-credential:1" }, "expired", 600);
    await store.touch("hash-1", 700);
    expect(await store.findByHash("hash-1")).toMatchObject({ lastUsedAt: 500, ended: "expired" });
  });

  it("ends live credentials by each selector once, and lists only live thread sessions", async () => {
    for (const n of [1, 2, 3, 4]) await store.insert(thread(n, { nodeId: n === 4 ? "node-b" : "node-a" }));
    expect(await store.end({ providerSessionId: "session:1" }, "revoked", 1)).toBe(1);
    expect(await store.end({ providerSessionId: "session:1" }, "revoked", 2)).toBe(0);
    expect(await store.end({ credentialId: "mcp-credential:2" }, "expired", 3)).toBe(1);
    expect(await store.liveSessions()).toEqual([
      { nodeId: "node-a", threadId: "thread:3", providerSessionId: "session:3" },
      { nodeId: "node-b", threadId: "thread:4", providerSessionId: "session:4" },
    ]);
    expect(await store.end({ nodeId: "node-b", kind: "thread" }, "revoked", 4)).toBe(1);
    expect(await store.end({ kind: "thread" }, "revoked", 5)).toBe(1);
    expect(await store.liveSessions()).toEqual([]);
    expect(await store.findByHash("hash-1")).toMatchObject({ ended: "revoked" });
    expect(await store.findByHash("hash-2")).toMatchObject({ ended: "expired" });
  });

  it("keeps its records across a reopen of the same file", async () => {
    await store.insert(thread(1));
    await store.close();
    store = SqliteCredentialStore.open(join(dir, "credentials.db"));
    expect(await store.findByHash("hash-1")).toEqual(thread(1));
  });
});
