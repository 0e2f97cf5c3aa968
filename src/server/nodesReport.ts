import type { NodeSummary, NodesReport } from "../api/nodeRoutes.js";
import type { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import type { EventStore } from "../store/eventStore.js";
import type { NodeRegistry } from "../store/nodes/nodeRegistry.js";

/** What `loom nodes` shows: every node seen, its heartbeat age, its agents' sessions and its effect leases. */
export async function nodesReport(input: {
  readonly self: string;
  readonly leaseMs: number;
  readonly nodes: NodeRegistry;
  readonly credentials: StoredCredentialRegistry;
  readonly store: EventStore;
  readonly now: number;
}): Promise<NodesReport> {
  const [nodes, sessions, leased] = await Promise.all([input.nodes.list(), input.credentials.liveSessions(), input.store.listOutbox("leased")]);
  const summaries = nodes.map(
    (node): NodeSummary => ({
      nodeId: node.nodeId,
      url: node.url,
      pid: node.pid,
      hostname: node.hostname,
      startedAt: new Date(node.startedAt).toISOString(),
      heartbeatAt: new Date(node.heartbeatAt).toISOString(),
      heartbeatAgeMs: Math.max(0, input.now - node.heartbeatAt),
      status: node.lostAt !== null ? "lost" : node.stoppedAt !== null ? "stopped" : "live",
      takenOverBy: node.takenOverBy,
      sessions: sessions.filter((s) => s.nodeId === node.nodeId).map(({ threadId, providerSessionId }) => ({ threadId, providerSessionId })),
      leases: leased
        .filter((row) => row.leaseOwner === node.nodeId)
        .map((row) => ({ effectId: row.id, kind: row.kind, threadId: row.streamId, leaseExpiresAt: row.leaseExpiresAt === null ? null : new Date(row.leaseExpiresAt).toISOString() })),
    }),
  );
  return { self: input.self, leaseMs: input.leaseMs, nodes: summaries };
}
