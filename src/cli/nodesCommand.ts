import { parseArgs } from "node:util";
import type { NodesReport } from "../api/nodeRoutes.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";
import { OwnerApi } from "./ownerApi.js";

export const NODES_HELP = `Usage:
  loom nodes [--state-dir DIR] [--json]

The Loom nodes sharing the running server's database (docs/postgres.md): each
node's status (live, stopped, lost), the age of its last heartbeat, and the
agent sessions and outbox leases it holds. On SQLite there is one node.
`;

type Output = (text: string) => void;

/** `loom nodes`; resolves with the exit code. */
export async function runNodes(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { "state-dir": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(NODES_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`loom nodes takes no arguments, got ${positionals.map((p) => JSON.stringify(p)).join(" ")}`);
  const report = await OwnerApi.connect(values["state-dir"]).get<NodesReport>("/api/nodes");
  out(values.json === true ? formatJson(report) : formatNodes(report));
  return 0;
}

/** One block per node: id, status, heartbeat age, then its sessions and leases. */
export function formatNodes(report: NodesReport): string {
  const lines = [`${report.nodes.length} node(s), lease ${report.leaseMs} ms`];
  for (const node of report.nodes) {
    const self = node.nodeId === report.self ? " (this node)" : "";
    const taken = node.takenOverBy === null ? "" : `, taken over by ${node.takenOverBy}`;
    lines.push(`${node.nodeId}${self}  ${node.status}${taken}  heartbeat ${(node.heartbeatAgeMs / 1000).toFixed(1)}s ago  ${node.url}  pid ${node.pid}@${node.hostname}`);
    lines.push(`  sessions: ${node.sessions.length}${node.sessions.map((s) => `\n    ${s.providerSessionId} (thread ${s.threadId})`).join("")}`);
    lines.push(`  leases: ${node.leases.length}${node.leases.map((l) => `\n    ${l.kind} ${l.effectId} (thread ${l.threadId})`).join("")}`);
  }
  return `${lines.join("\n")}\n`;
}
