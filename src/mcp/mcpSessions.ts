import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { McpInvocationScope } from "./credentialRegistry.js";

/**
 * Open MCP sessions (Streamable HTTP, stateful). A session belongs to the
 * credential that initialized it: only that credential may use it, and it is
 * closed on DELETE, when the credential ends, when idle too long, and on
 * shutdown. Sessions live in memory; a restart ends them all.
 */

export const OWNER_IDENTITY = "owner";

/** The credential a session belongs to: its credentialId, or "owner". */
export function identityOf(scope: McpInvocationScope): string {
  return scope.kind === "owner" ? OWNER_IDENTITY : scope.credentialId;
}

export interface McpSession {
  readonly id: string;
  readonly identity: string;
  /** Refreshed from the bearer token on every request. */
  scope: McpInvocationScope;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  lastSeenAt: number;
  /** HTTP requests in flight, the standalone GET stream included. */
  activeRequests: number;
  /** One per in-flight tools/call: aborted when the response it answers on goes away. */
  readonly responseAborts: Map<RequestId, AbortController>;
}

export const SessionCloseReason = {
  deleted: "deleted",
  credentialEnded: "credential_ended",
  /** The provider session's run ended and nothing is queued: the agent reconnects for its next turn. */
  runEnded: "run_ended",
  idle: "idle",
  shutdown: "shutdown",
} as const;
export type SessionCloseReason = (typeof SessionCloseReason)[keyof typeof SessionCloseReason];

export interface McpSessionTableOptions {
  readonly idleTtlMs: number;
  readonly now: () => number;
  readonly log: (line: string) => void;
}

export class McpSessionTable {
  private readonly sessions = new Map<string, McpSession>();

  constructor(private readonly options: McpSessionTableOptions) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): McpSession | undefined {
    return this.sessions.get(id);
  }

  /** Register an initialized session; it leaves the table when its server closes. */
  add(session: McpSession): void {
    this.sessions.set(session.id, session);
    const previous = session.server.onclose;
    session.server.onclose = () => {
      previous?.();
      if (this.sessions.get(session.id) === session) {
        // Still listed, so the transport closed it itself: the client sent DELETE.
        this.sessions.delete(session.id);
        this.options.log(`mcp: session ${session.id} closed (${SessionCloseReason.deleted})`);
      }
      for (const controller of session.responseAborts.values()) controller.abort();
      session.responseAborts.clear();
    };
  }

  /** Mark an HTTP request on the session as started; call the returned function when it ends. */
  begin(session: McpSession): () => void {
    session.activeRequests += 1;
    session.lastSeenAt = this.options.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.activeRequests -= 1;
      session.lastSeenAt = this.options.now();
    };
  }

  /** Close a session: its in-flight calls are aborted and its streams ended. */
  async close(session: McpSession, reason: SessionCloseReason): Promise<void> {
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.options.log(`mcp: session ${session.id} closed (${reason})`);
    try {
      await session.server.close();
    } catch (error) {
      this.options.log(`mcp: closing session ${session.id} failed: ${(error as Error).message}`);
    }
  }

  /**
   * Close sessions whose credential has ended, and idle ones: no request in
   * flight and none for idleTtlMs. Returns how many were closed.
   */
  async sweep(isCredentialActive: (session: McpSession) => boolean | Promise<boolean>): Promise<number> {
    const now = this.options.now();
    const doomed: [McpSession, SessionCloseReason][] = [];
    for (const session of [...this.sessions.values()]) {
      if (!(await isCredentialActive(session))) {
        doomed.push([session, SessionCloseReason.credentialEnded]);
      } else if (session.activeRequests === 0 && now - session.lastSeenAt >= this.options.idleTtlMs) {
        doomed.push([session, SessionCloseReason.idle]);
      }
    }
    await Promise.all(doomed.map(([session, reason]) => this.close(session, reason)));
    return doomed.length;
  }

  /** Close every session of a provider session's credentials; returns how many. */
  async closeForProviderSession(providerSessionId: string, reason: SessionCloseReason): Promise<number> {
    const doomed = [...this.sessions.values()].filter((session) => session.scope.kind === "thread" && session.scope.providerSessionId === providerSessionId);
    await Promise.all(doomed.map((session) => this.close(session, reason)));
    return doomed.length;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => this.close(session, SessionCloseReason.shutdown)));
  }
}
