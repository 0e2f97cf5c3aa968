/**
 * The nodes serving one log (docs/postgres.md "Nodes"): each Loom process
 * registers, records a heartbeat every `nodes.heartbeatMs`, and marks itself
 * stopped on a clean shutdown. A node whose heartbeat is older than the lease
 * time is claimed as lost by exactly one other node, which takes its work
 * over (src/engine/nodeTakeover.ts).
 */
export interface NodeRecord {
  readonly nodeId: string;
  readonly url: string;
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: number;
  readonly heartbeatAt: number;
  /** Set by a clean shutdown. */
  readonly stoppedAt: number | null;
  /** Set by the node that took the silent node's work over. */
  readonly lostAt: number | null;
  readonly takenOverBy: string | null;
}

export type NodeRegistration = Pick<NodeRecord, "nodeId" | "url" | "pid" | "hostname" | "startedAt">;

export interface NodeRegistry {
  register(node: NodeRegistration): Promise<void>;
  /** Record that the node is alive. False when another node already declared it lost: its work is gone. */
  heartbeat(nodeId: string, now: number): Promise<boolean>;
  /**
   * Atomically mark as lost, taken over by `takerId`, every node that is
   * neither stopped nor already lost and whose heartbeat is older than
   * `now - leaseMs`; returns their ids. Each lost node is returned to exactly
   * one caller.
   */
  claimLost(takerId: string, now: number, leaseMs: number): Promise<readonly string[]>;
  /** A clean shutdown: the node's leases are free at once. */
  stop(nodeId: string, now: number): Promise<void>;
  /** Every node seen, newest first. */
  list(): Promise<readonly NodeRecord[]>;
  /**
   * Threads whose agent process a node other than `nodeId` holds (a live
   * thread credential of a node neither stopped nor lost): their effects are
   * that node's to run.
   */
  threadsHeldElsewhere(nodeId: string): Promise<readonly string[]>;
  /** A setting shared by every node: stored as `value` by the first caller, read back by all. */
  sharedSetting(key: string, value: string): Promise<string>;
}

/** One node alone (SQLite): the registry is this process. */
export class LocalNodeRegistry implements NodeRegistry {
  private readonly nodes = new Map<string, NodeRecord>();

  register(node: NodeRegistration): Promise<void> {
    this.nodes.set(node.nodeId, { ...node, heartbeatAt: node.startedAt, stoppedAt: null, lostAt: null, takenOverBy: null });
    return Promise.resolve();
  }

  heartbeat(nodeId: string, now: number): Promise<boolean> {
    const node = this.nodes.get(nodeId);
    if (node !== undefined) this.nodes.set(nodeId, { ...node, heartbeatAt: now });
    return Promise.resolve(node !== undefined);
  }

  claimLost(): Promise<readonly string[]> {
    return Promise.resolve([]);
  }

  stop(nodeId: string, now: number): Promise<void> {
    const node = this.nodes.get(nodeId);
    if (node !== undefined) this.nodes.set(nodeId, { ...node, stoppedAt: now });
    return Promise.resolve();
  }

  list(): Promise<readonly NodeRecord[]> {
    return Promise.resolve([...this.nodes.values()]);
  }

  threadsHeldElsewhere(): Promise<readonly string[]> {
    return Promise.resolve([]);
  }

  sharedSetting(_key: string, value: string): Promise<string> {
    return Promise.resolve(value);
  }
}
