import { describe, expect, it } from "vitest";
import { type ThreadTreeNode, formatLineageHeader, formatTree } from "./treeOutput.js";

const node = (overrides: Partial<ThreadTreeNode>): ThreadTreeNode => ({
  threadId: "thread:a",
  title: "root",
  relation: "root",
  parentThreadId: null,
  providerInstanceId: "claude",
  status: "completed",
  latestRunId: "run:a",
  archived: false,
  waitingOn: null,
  pendingRequestIds: [],
  children: [],
  ...overrides,
});

describe("the tree's limit line", () => {
  it("says a child waits for its limit to reset and resumes by itself, in the tree and the read header", () => {
    const limit = "waiting for the limit to reset at 14:05 UTC, resumes by itself";
    const child = node({ threadId: "thread:b", title: "child", relation: "subagent", parentThreadId: "thread:a", status: "failed", limit });
    const tree = { roots: [node({ children: [child] })], ancestors: [] };
    expect(formatTree(tree)).toBe(`thread:a completed claude "root"\n└─ thread:b failed [subagent] claude "child" — ${limit}\n`);
    expect(formatLineageHeader({ roots: [child], ancestors: [{ threadId: "thread:a", title: "root" }] })).toEqual([`parent: thread:a "root" (subagent)`, limit]);
  });
});
