import type { NodesConfig } from "../config/config.js";
import type { InstanceCrashPolicy } from "../engine/reconcile.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import { takeOverLostNode } from "../engine/nodeTakeover.js";
import type { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import type { EventStore } from "../store/eventStore.js";
import type { NodeRegistry } from "../store/nodes/nodeRegistry.js";

export interface NodeHeartbeatsOptions {
  readonly nodeId: string;
  readonly nodes: NodeRegistry;
  readonly credentials: StoredCredentialRegistry;
  readonly orchestrator: Orchestrator;
  readonly store: EventStore;
  readonly config: NodesConfig;
  /** The provider instances' configured onCrash, weighed by the decider for each run the lost node carried. */
  readonly onCrash?: InstanceCrashPolicy;
  readonly clock?: () => number;
  readonly log: (line: string) => void;
  /**
   * The node must stop: another node declared it lost, or it could not
   * record a heartbeat for so long that another node may take its work over.
   * Called once; the heartbeats have stopped by then.
   */
  readonly onLost?: (error: NodeLostError) => void;
}

/**
 * Why a node stopped itself instead of carrying on (docs/postgres.md "When a
 * node dies"): `declared_lost` when another node already took its work over,
 * `database_unreachable` when no heartbeat reached the database for
 * `leaseMs - heartbeatMs`, the point after which another node may.
 */
export class NodeLostError extends Error {
  override readonly name = "NodeLostError";

  constructor(
    readonly code: "declared_lost" | "database_unreachable",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A node's heartbeat and its watch over the others (docs/postgres.md
 * "Nodes"): every `heartbeatMs` it records that it is alive, then claims any
 * node silent for longer than `leaseMs` and takes that node's work over. The
 * beat renews every lease the node holds at once: its agents' sessions (its
 * live credentials) and, through the outbox worker's own renewals, the
 * effects it runs.
 */
export class NodeHeartbeats {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  private readonly clock: () => number;
  /** When a heartbeat last reached the database. */
  private lastBeatAt: number;
  /** When the last tick ran, and when the process last came back from a pause longer than the lease allows. */
  private lastTickAt: number;
  private resumedAt = Number.NEGATIVE_INFINITY;
  private lastError: unknown = null;
  private lost: NodeLostError | null = null;

  constructor(private readonly options: NodeHeartbeatsOptions) {
    this.clock = options.clock ?? Date.now;
    this.lastBeatAt = this.clock();
    this.lastTickAt = this.lastBeatAt;
  }

  /** The reason the node stopped itself, once it has. */
  get lostReason(): NodeLostError | null {
    return this.lost;
  }

  /**
   * One beat now (and a takeover of nodes found lost), then one every
   * heartbeatMs. Each tick first checks the last beat that reached the
   * database, so a beat stuck on an unreachable database still ends the node
   * in time.
   */
  async start(): Promise<void> {
    await this.beat();
    this.lastTickAt = this.clock();
    this.timer = setInterval(() => this.tick(), this.options.config.heartbeatMs);
    this.timer.unref();
  }

  /** Beats that fail stop the node once it can no longer hold its leases. */
  private tick(): void {
    if (this.lost !== null) return;
    const { heartbeatMs, leaseMs } = this.options.config;
    const now = this.clock();
    // After a pause (a suspended or starved process) the silence is the process's, not the database's: the database gets a full
    // allowance from now, and the beat in flight or the next one finds out whether the node was declared lost meanwhile.
    if (now - this.lastTickAt >= leaseMs - heartbeatMs) this.resumedAt = now;
    this.lastTickAt = now;
    const silentMs = now - Math.max(this.lastBeatAt, this.resumedAt);
    // Only a beat that failed or hangs counts.
    if (silentMs >= leaseMs - heartbeatMs && (this.lastError !== null || this.beating !== null)) {
      const reason = this.lastError === null ? "no answer yet" : this.lastError instanceof Error ? this.lastError.message || this.lastError.name : "unknown error";
      this.fence(
        new NodeLostError(
          "database_unreachable",
          `node ${this.options.nodeId} could not reach the database for ${silentMs} ms (lease ${leaseMs} ms): ${reason}; it stops so that another node takes its work over`,
          { cause: this.lastError },
        ),
      );
      return;
    }
    void this.beat();
  }

  private fence(error: NodeLostError): void {
    if (this.lost !== null) return;
    this.lost = error;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.options.log(`loom: ${error.message}`);
    this.options.onLost?.(error);
  }

  /** Beat and look for lost nodes; beats never overlap. */
  beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => {
      this.beating = null;
    });
    return this.beating;
  }

  /** Stop beating and record a clean shutdown: the node's leases are free at once. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    // A lost node's leases are no longer its own: the node that took it over released them.
    if (this.lost !== null) return;
    await this.beating;
    const { nodes, nodeId, credentials } = this.options;
    await credentials.revokeNode(nodeId);
    await nodes.stop(nodeId, this.clock());
  }

  private async beatOnce(): Promise<void> {
    const { nodes, nodeId, log } = this.options;
    if (this.lost !== null) return;
    try {
      const at = this.clock();
      if (!(await nodes.heartbeat(nodeId, at))) {
        const record = (await nodes.list()).find((node) => node.nodeId === nodeId);
        const by = record?.takenOverBy ?? null;
        this.fence(new NodeLostError("declared_lost", `node ${nodeId} was declared lost${by === null ? "" : ` by node ${by}`}, which ended its runs; it stops instead of carrying on`));
        return;
      }
      this.lastBeatAt = Math.max(this.lastBeatAt, at);
      this.lastError = null;
      for (const lost of await nodes.claimLost(nodeId, this.clock(), this.options.config.leaseMs)) {
        await this.takeOver(lost);
      }
    } catch (error) {
      this.lastError = error;
      log(`loom: node heartbeat failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async takeOver(lostNodeId: string): Promise<void> {
    const { credentials, orchestrator, store, log } = this.options;
    const sessions = (await credentials.liveSessions()).filter((session) => session.nodeId === lostNodeId);
    await credentials.revokeNode(lostNodeId);
    const report = await takeOverLostNode(orchestrator, store, { nodeId: lostNodeId, sessions }, this.options.onCrash);
    log(
      `loom: took over lost node ${lostNodeId}: ${report.resumedRuns} run(s) resumed, ${report.interruptedRuns} run(s) interrupted (node_lost), ${report.releasedSessions} session(s) released, ${report.lostEffects} effect(s) lost`,
    );
  }
}
