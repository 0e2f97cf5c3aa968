import type { Pool } from "pg";
import type { NodeRecord, NodeRegistration, NodeRegistry } from "./nodeRegistry.js";

interface Row {
  readonly node_id: string;
  readonly url: string;
  readonly pid: number;
  readonly hostname: string;
  readonly started_at: number;
  readonly heartbeat_at: number;
  readonly stopped_at: number | null;
  readonly lost_at: number | null;
  readonly taken_over_by: string | null;
}

/**
 * The node registry in the shared database (`loom_nodes`, migration 3 of the
 * PostgreSQL event store). Every statement is a single row-level UPDATE or
 * INSERT, so claiming a lost node is atomic: concurrent claimers each get a
 * disjoint set. Times are the nodes' own clocks (epoch ms); keep them in sync
 * (NTP) to well under the lease time.
 */
export class PostgresNodeRegistry implements NodeRegistry {
  constructor(private readonly pool: Pool) {}

  async register(node: NodeRegistration): Promise<void> {
    await this.pool.query(
      `INSERT INTO loom_nodes (node_id, url, pid, hostname, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (node_id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = EXCLUDED.heartbeat_at, stopped_at = NULL`,
      [node.nodeId, node.url, node.pid, node.hostname, node.startedAt],
    );
  }

  async heartbeat(nodeId: string, now: number): Promise<boolean> {
    const result = await this.pool.query({
      name: "loom_node_heartbeat",
      text: "UPDATE loom_nodes SET heartbeat_at = GREATEST(heartbeat_at, $2) WHERE node_id = $1 AND lost_at IS NULL",
      values: [nodeId, now],
    });
    return (result.rowCount ?? 0) > 0;
  }

  async claimLost(takerId: string, now: number, leaseMs: number): Promise<readonly string[]> {
    const result = await this.pool.query<{ node_id: string }>({
      name: "loom_node_claim_lost",
      text: `UPDATE loom_nodes SET lost_at = $2, taken_over_by = $1
             WHERE node_id <> $1 AND stopped_at IS NULL AND lost_at IS NULL AND heartbeat_at < $3
             RETURNING node_id`,
      values: [takerId, now, now - leaseMs],
    });
    return result.rows.map((row) => row.node_id).sort();
  }

  async stop(nodeId: string, now: number): Promise<void> {
    await this.pool.query("UPDATE loom_nodes SET stopped_at = $2 WHERE node_id = $1 AND stopped_at IS NULL", [nodeId, now]);
  }

  async list(): Promise<readonly NodeRecord[]> {
    const result = await this.pool.query<Row>("SELECT * FROM loom_nodes ORDER BY started_at DESC, node_id");
    return result.rows.map((row) => ({
      nodeId: row.node_id,
      url: row.url,
      pid: row.pid,
      hostname: row.hostname,
      startedAt: row.started_at,
      heartbeatAt: row.heartbeat_at,
      stoppedAt: row.stopped_at,
      lostAt: row.lost_at,
      takenOverBy: row.taken_over_by,
    }));
  }

  async threadsHeldElsewhere(nodeId: string): Promise<readonly string[]> {
    const result = await this.pool.query<{ thread_id: string }>({
      name: "loom_threads_held_elsewhere",
      text: `SELECT DISTINCT c.thread_id FROM loom_credentials c JOIN loom_nodes n ON n.node_id = c.node_id
             WHERE c.ended IS NULL AND c.kind = 'thread' AND c.node_id <> $1 AND n.stopped_at IS NULL AND n.lost_at IS NULL`,
      values: [nodeId],
    });
    return result.rows.map((row) => row.thread_id);
  }

  async sharedSetting(key: string, value: string): Promise<string> {
    await this.pool.query("INSERT INTO loom_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, value]);
    const result = await this.pool.query<{ value: string }>("SELECT value FROM loom_settings WHERE key = $1", [key]);
    return result.rows[0]?.value ?? value;
  }
}
