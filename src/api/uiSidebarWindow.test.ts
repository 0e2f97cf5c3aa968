import { describe, expect, it } from "vitest";
import type { ThreadShell } from "../contracts/wire/projections.js";
import { ROOT_PAGE, rootOf, windowRoots } from "../../ui/src/sidebarWindow.js";

/** The sidebar's window over a long thread list (ui/src/sidebarWindow.ts). */

const node = (id: string) => ({ row: { id } });
const ids = (shown: readonly [string, readonly { row: { id: string } }[]][]) => shown.map(([project, roots]) => [project, roots.map((n) => n.row.id)]);

describe("the sidebar's window", () => {
  it("shows the first roots over all projects in project order and counts the rest", () => {
    const forest = new Map([
      ["b", [node("b1"), node("b2"), node("b3")]],
      ["a", [node("a1"), node("a2")]],
    ]);
    const { shown, hidden } = windowRoots(forest, 3, new Set());
    expect(ids(shown)).toEqual([["a", ["a1", "a2"]], ["b", ["b1"]]]);
    expect(hidden).toBe(2);
    expect(windowRoots(forest, 10, new Set()).hidden).toBe(0);
    expect(ROOT_PAGE).toBe(200);
  });

  it("keeps a root beyond the window when it holds the open or the keyboard's thread, in its place", () => {
    const forest = new Map([["a", [node("a1"), node("a2"), node("a3"), node("a4")]]]);
    const { shown, hidden } = windowRoots(forest, 1, new Set(["a3"]));
    expect(ids(shown)).toEqual([["a", ["a1", "a3"]]]);
    expect(hidden).toBe(2);
  });

  it("finds a thread's root through the rows held, and stops where a parent is not held", () => {
    const row = (id: string, parentThreadId: string | null) => ({ id, parentThreadId }) as ThreadShell;
    const threads = new Map([row("root", null), row("child", "root"), row("grandchild", "child"), row("orphan", "gone")].map((r) => [r.id, r]));
    expect(rootOf(threads, "grandchild")).toBe("root");
    expect(rootOf(threads, "root")).toBe("root");
    expect(rootOf(threads, "orphan")).toBe("orphan");
    expect(rootOf(threads, "unknown")).toBeNull();
    expect(rootOf(threads, null)).toBeNull();
  });
});
