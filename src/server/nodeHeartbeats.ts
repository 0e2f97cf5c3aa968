import type { NodesConfig } from "../config/config.js";
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
  readonly clock?: () => number;
  readonly log: (line: string) => void;
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

  constructor(private readonly options: NodeHeartbeatsOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** One beat now (and a takeover of nodes found lost), then one every heartbeatMs. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.options.config.heartbeatMs);
    this.timer.unref();
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
    await this.beating;
    const { nodes, nodeId, credentials } = this.options;
    await credentials.revokeNode(nodeId);
    await nodes.stop(nodeId, this.clock());
  }

  private async beatOnce(): Promise<void> {
    const { nodes, nodeId, log } = this.options;
    try {
      if (!(await nodes.heartbeat(nodeId, this.clock()))) {
        log(`loom: node ${nodeId} was declared lost by another node; its runs were ended there`);
      }
      for (const lost of await nodes.claimLost(nodeId, this.clock(), this.options.config.leaseMs)) {
        await this.takeOver(lost);
      }
    } catch (error) {
      log(`loom: node heartbeat failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async takeOver(lostNodeId: string): Promise<void> {
    const { credentials, orchestrator, store, log } = this.options;
    const sessions = (await credentials.liveSessions()).filter((session) => session.nodeId === lostNodeId);
    await credentials.revokeNode(lostNodeId);
    const report = await takeOverLostNode(orchestrator, store, { nodeId: lostNodeId, sessions });
    log(
      `loom: took over lost node ${lostNodeId}: ${report.interruptedRuns} run(s) interrupted (node_lost), ${report.releasedSessions} session(s) released, ${report.lostEffects} effect(s) lost`,
    );
  }
}
