import type { ThreadTreeNode, ThreadTreeResult } from "../app/threads/tree.js";

export type { ThreadTreeNode, ThreadTreeResult };

/** How `loom threads tree` and the read header show lineage. Pure: each returns text. */

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function nodeLine(node: ThreadTreeNode): string {
  const relation = node.relation === "root" || node.parentThreadId === null ? "" : ` [${node.relation}]`;
  const waiting = node.waitingOn === null ? "" : ` — waiting on ${node.waitingOn}`;
  const limit = node.limit === undefined ? "" : ` — ${node.limit}`;
  const archived = node.archived ? " (archived)" : "";
  return `${node.threadId} ${node.status}${relation} ${node.providerInstanceId ?? "-"} "${oneLine(node.title, 50)}"${archived}${waiting}${limit}`;
}

function lines(node: ThreadTreeNode, prefix: string, childPrefix: string, out: string[]): void {
  out.push(`${prefix}${nodeLine(node)}`);
  node.children.forEach((child, i) => {
    const last = i === node.children.length - 1;
    lines(child, `${childPrefix}${last ? "└─ " : "├─ "}`, `${childPrefix}${last ? "   " : "│  "}`, out);
  });
}

/** `loom threads tree`: each root with its descendants drawn beneath it. */
export function formatTree(tree: ThreadTreeResult): string {
  if (tree.roots.length === 0) return "no threads\n";
  const out: string[] = [];
  if (tree.ancestors.length > 0) out.push(`ancestors: ${tree.ancestors.map((a) => a.threadId).join(" › ")}`);
  for (const root of tree.roots) lines(root, "", "", out);
  return `${out.join("\n")}\n`;
}

/** The read header's lineage lines: parent (with the path above it) and children with their statuses. */
export function formatLineageHeader(tree: ThreadTreeResult): string[] {
  const root = tree.roots[0];
  if (root === undefined) return [];
  const header: string[] = [];
  const parent = tree.ancestors[tree.ancestors.length - 1];
  if (parent !== undefined) header.push(`parent: ${parent.threadId} "${oneLine(parent.title, 50)}" (${root.relation})`);
  if (root.children.length > 0) header.push(`children: ${root.children.map((c) => `${c.threadId} (${c.status})`).join(", ")}`);
  if (root.waitingOn !== null) header.push(`waiting on ${root.waitingOn}`);
  if (root.limit !== undefined) header.push(root.limit);
  return header;
}

/** Every node of the tree, depth first. */
export function treeNodes(tree: ThreadTreeResult): ThreadTreeNode[] {
  const all: ThreadTreeNode[] = [];
  const visit = (node: ThreadTreeNode): void => {
    all.push(node);
    node.children.forEach(visit);
  };
  tree.roots.forEach(visit);
  return all;
}
