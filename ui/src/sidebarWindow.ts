import type { ThreadShell } from "../../src/contracts/wire/projections.js";

/**
 * The sidebar's window over a long thread list: it renders the first
 * ROOT_PAGE root threads and grows by as many each time the list's end comes
 * into view (ui/src/sidebar.tsx), so 10,000 threads paint about as fast as 100.
 */

/** How many root threads the sidebar renders at first, and how many more each time the list's end comes into view. */
export const ROOT_PAGE = 200;

/**
 * The roots to render, per project in display order: the first `limit` over
 * all projects, plus the roots of the open and the keyboard's threads
 * wherever they are, so a long list paints as fast as a short one.
 */
export function windowRoots<N extends { readonly row: Pick<ThreadShell, "id"> }>(forest: ReadonlyMap<string, N[]>, limit: number, keep: ReadonlySet<string>): { readonly shown: [string, N[]][]; readonly hidden: number } {
  let left = limit;
  let hidden = 0;
  const shown: [string, N[]][] = [];
  for (const [projectId, roots] of [...forest].sort(([a], [b]) => a.localeCompare(b))) {
    const visible = roots.filter((node, i) => i < left || keep.has(node.row.id));
    hidden += roots.length - visible.length;
    left = Math.max(0, left - roots.length);
    if (visible.length > 0) shown.push([projectId, visible]);
  }
  return { shown, hidden };
}

/** The root of a thread's tree, as the rows held know it. */
export function rootOf(threads: ReadonlyMap<string, ThreadShell>, id: string | null): string | null {
  let at = id === null ? undefined : threads.get(id);
  for (let depth = 0; at !== undefined && at.parentThreadId !== null && depth < 64; depth++) {
    const parent = threads.get(at.parentThreadId);
    if (parent === undefined) break;
    at = parent;
  }
  return at?.id ?? null;
}
