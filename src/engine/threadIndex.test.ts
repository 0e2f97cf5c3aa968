import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AppThread } from "../contracts/thread.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { Orchestrator } from "./orchestrator.js";
import { SHELL_PAGE_MAX_LIMIT, ShellCursorError, shellSnapshot, shellSnapshotPage } from "./projections.js";
import { ALL_PROJECTS, ThreadListKind } from "./threadIndex.js";

/**
 * The thread index stays equal to the naive scan-and-sort of the state after
 * any sequence of creates (clock going back and forth, so inserts land
 * anywhere), archives, unarchives, deletes, pins and unpins, including after a
 * replay; and paging the shell snapshot through its cursors yields exactly the
 * unpaged snapshot.
 */

type Op =
  | { readonly kind: "create"; readonly project: "p1" | "p2"; readonly at: number; readonly subagent: false }
  | { readonly kind: "archive" | "unarchive" | "delete" | "pin" | "unpin"; readonly target: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("create" as const), project: fc.constantFrom("p1" as const, "p2" as const), at: fc.integer({ min: 0, max: 50 }), subagent: fc.constant(false as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom("archive" as const, "unarchive" as const, "delete" as const, "pin" as const, "unpin" as const), target: fc.nat(40) }) },
);

function newestFirst(threads: AppThread[]): string[] {
  return threads.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((t) => t.id);
}

async function run(ops: readonly Op[]): Promise<{ orchestrator: Orchestrator; store: MemoryEventStore }> {
  let now = Date.UTC(2026, 0, 1);
  const store = new MemoryEventStore();
  const orchestrator = await Orchestrator.open({ store, clock: () => now });
  const ids: string[] = [];
  let n = 0;
  for (const op of ops) {
    n += 1;
    if (op.kind === "create") {
      now = Date.UTC(2026, 0, 1) + op.at * 1000;
      const threadId = `thread:${n}`;
      ids.push(threadId);
      await orchestrator.dispatch({ type: "thread.create", commandId: `cmd:${n}`, data: { threadId, projectId: op.project, title: `T${n}` } });
    } else if (ids.length > 0) {
      const threadId = ids[op.target % ids.length]!;
      await orchestrator.dispatch({ type: `thread.${op.kind}`, commandId: `cmd:${n}`, data: { threadId } });
    }
  }
  return { orchestrator, store };
}

function check(orchestrator: Orchestrator): void {
  const state = orchestrator.state;
  const all = [...state.threads.values()].filter((t) => t.deletedAt === null);
  for (const scope of ["p1", "p2", ALL_PROJECTS]) {
    const inScope = all.filter((t) => scope === ALL_PROJECTS || t.projectId === scope);
    const main = inScope.filter((t) => t.archivedAt === null && t.lineage.relation !== "subagent");
    expect([...orchestrator.threads.list(scope, ThreadListKind.main).newestFirst()].map((e) => e.id)).toEqual(newestFirst(main));
    expect([...orchestrator.threads.list(scope, ThreadListKind.all).newestFirst()].map((e) => e.id)).toEqual(newestFirst(inScope));
  }
}

function pageThrough(orchestrator: Orchestrator, includeArchived: boolean, limit: number): string[] {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1_000; pages++) {
    const page = shellSnapshotPage(orchestrator.state, orchestrator.threads, { includeArchived, limit, ...(cursor === undefined ? {} : { cursor }) });
    expect(page.snapshotSequence).toBe(orchestrator.state.lastSequence);
    expect(page.threads.length).toBeLessThanOrEqual(limit);
    seen.push(...page.threads.map((t) => t.id));
    if (page.nextCursor === null) return seen;
    cursor = page.nextCursor;
  }
  throw new Error("paging did not end");
}

describe("thread index", () => {
  it("property: lists equal the naive sort, live and after replay; shell pages concatenate to the unpaged snapshot", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 7 }), async (ops, limit) => {
        const { orchestrator, store } = await run(ops);
        check(orchestrator);
        for (const includeArchived of [false, true]) {
          expect(pageThrough(orchestrator, includeArchived, limit)).toEqual(shellSnapshot(orchestrator.state, { includeArchived }).threads.map((t) => t.id));
        }
        const replayed = await Orchestrator.open({ store });
        check(replayed);
      }),
      { numRuns: 60 },
    );
  });

  it("a bad cursor or limit is refused", async () => {
    const { orchestrator } = await run([{ kind: "create", project: "p1", at: 1, subagent: false }]);
    const page = (options: { cursor?: string; limit?: number }) => () => shellSnapshotPage(orchestrator.state, orchestrator.threads, options);
    expect(page({ cursor: "not-a-cursor" })).toThrow(ShellCursorError);
    expect(page({ cursor: Buffer.from('{"phase":"x"}').toString("base64url") })).toThrow(ShellCursorError);
    expect(page({ limit: 0 })).toThrow(ShellCursorError);
    expect(page({ limit: SHELL_PAGE_MAX_LIMIT + 1 })).toThrow(ShellCursorError);
    expect(page({ limit: SHELL_PAGE_MAX_LIMIT }).call(null).threads).toHaveLength(1);
  });
});
