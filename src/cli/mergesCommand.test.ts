import { describe, expect, it } from "vitest";
import type { MergeQueueEntryView } from "../contracts/tools/mergeQueueTools.js";
import { UsageError } from "./errors.js";
import { formatMergeQueue, runMerges } from "./mergesCommand.js";

const entry = (overrides: Partial<MergeQueueEntryView>): MergeQueueEntryView => ({
  entryId: "merge:p:a:1",
  parentThreadId: "thread:p",
  childThreadId: "thread:a",
  status: "queued",
  onRefused: "report",
  enqueuedAt: "2026-12-07T10:00:00.000Z",
  startedAt: null,
  endedAt: null,
  attempts: 0,
  outcome: null,
  commit: null,
  files: [],
  workspaceCode: null,
  reason: null,
  check: null,
  childRunId: null,
  resolverThreadId: null,
  resolverStatus: null,
  log: ["2026-12-07T10:00:00.000Z queued"],
  ...overrides,
});

describe("loom merges", () => {
  it("prints each entry's status, how it ended and its log, then how many are open", () => {
    const text = formatMergeQueue({
      threadId: "thread:p",
      open: 1,
      entries: [
        entry({ status: "merged", outcome: "fast_forward", commit: "0123456789abcdef", log: ["t0 queued", "t1 merging", "t2 merged (fast_forward, parent at 0123456789abcdef)"] }),
        entry({ entryId: "merge:p:b:2", childThreadId: "thread:b", status: "conflict", workspaceCode: "workspace_merge_conflict", files: ["a.txt", "b.txt"] }),
        entry({ entryId: "merge:p:c:3", childThreadId: "thread:c" }),
        entry({ entryId: "merge:p:d:4", childThreadId: "thread:d", status: "resolving", onRefused: "resolver", resolverThreadId: "thread:r", resolverStatus: "running" }),
      ],
    });
    expect(text.split("\n")).toEqual([
      "merge:p:a:1  merged  thread:a -> thread:p  fast_forward 0123456789ab",
      "    t0 queued",
      "    t1 merging",
      "    t2 merged (fast_forward, parent at 0123456789abcdef)",
      "merge:p:b:2  conflict  thread:b -> thread:p  workspace_merge_conflict: a.txt, b.txt",
      "    2026-12-07T10:00:00.000Z queued",
      "merge:p:c:3  queued  thread:c -> thread:p",
      "    2026-12-07T10:00:00.000Z queued",
      "merge:p:d:4  resolving  thread:d -> thread:p  resolver thread:r running",
      "    2026-12-07T10:00:00.000Z queued",
      "1 open",
      "",
    ]);
    expect(formatMergeQueue({ threadId: null, open: 0, entries: [] })).toBe("No merges queued.\n");
  });

  it("refuses --cancel without the parent and a second parent before asking the server", async () => {
    await expect(runMerges(["--cancel", "merge:x"])).rejects.toBeInstanceOf(UsageError);
    await expect(runMerges(["thread:a", "thread:b"])).rejects.toBeInstanceOf(UsageError);
  });
});
