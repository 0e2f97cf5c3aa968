import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Run, RunStatus } from "../contracts/entities/runs.js";
import type { TurnItem } from "../contracts/turnItems.js";
import { runsOf } from "../engine/queries.js";
import type { LoomConfigFile } from "../config/config.js";
import { type LoomServer, startLoomServer } from "../server/loomServer.js";
import { LoomMcpClient } from "./mcpClient.js";
import type { SchedulerTimers } from "../scheduler/scheduler.js";
import type { ProviderDriver } from "../providers/adapter.js";

/**
 * Integration-test setup (DESIGN §6): the real Loom server on 127.0.0.1 in a
 * temp dir, the official MCP SDK client with the owner token, and helpers to
 * read Loom's own state. Tests drive agents with the `scripted` driver.
 */

/** How much of the server log a timed-out wait reports. */
const LOG_TAIL_LINES = 60;

/** Two scripted instances: `scripted` steers and restarts, `plain` does neither. */
export const TEST_PROVIDERS: NonNullable<LoomConfigFile["providers"]> = [
  { id: "scripted", driver: "scripted" },
  { id: "plain", driver: "scripted", options: { capabilities: { steering: false, restart: false } } },
];

export interface HarnessOptions {
  /**
   * Written to a file and passed as configPath; `providers` defaults to
   * TEST_PROVIDERS. Per-turn checkpoints are off unless `workspaces.checkpoints`
   * says otherwise: a post-turn capture is recorded after its run ended, so
   * tests that check nothing more was written after a run would race with it.
   * The workspace tests turn them on.
   */
  readonly config?: LoomConfigFile;
  readonly progressIntervalMs?: number;
  /** Mount the diagnostics toolkit (loom_echo). */
  readonly diagnosticsTools?: boolean;
  /** Receives every line the server logs (default: dropped). */
  readonly log?: (line: string) => void;
  /** The WebSocket endpoint's heartbeat interval (default: the server's). */
  readonly wsHeartbeatMs?: number;
  /** The scheduler's clock and timers (src/testkit/manualClock.ts). */
  readonly clock?: () => number;
  readonly schedulerTimers?: SchedulerTimers;
  /** Drivers that replace the built-in ones of the same name (a driver on a fake SDK boundary). */
  readonly drivers?: readonly ProviderDriver[];
  /** The ACP registry the server's /api/providers routes read (a file or URL). */
  readonly acpRegistry?: string;
}

/** A scripted turn input: `script({ say: "hi" }, { sleep: 100 })`. */
export function script(...steps: readonly Record<string, unknown>[]): string {
  return JSON.stringify({ script: steps });
}

export interface DispatchResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export interface CreatedThread {
  readonly threadId: string;
  readonly runId: string | null;
}

export class LoomHarness {
  private readonly clients: LoomMcpClient[] = [];

  private constructor(
    readonly server: LoomServer,
    /** The temp dir: the default project's root (and the agents' working directory). */
    readonly dir: string,
    readonly ownerToken: string,
    readonly owner: LoomMcpClient,
  ) {}

  static async start(options: HarnessOptions = {}): Promise<LoomHarness> {
    const dir = mkdtempSync(join(tmpdir(), "loom-it-"));
    mkdirSync(join(dir, ".loom"));
    const workspaces = { checkpoints: false, ...options.config?.workspaces };
    writeFileSync(join(dir, "loom-config.json"), JSON.stringify({ providers: TEST_PROVIDERS, ...options.config, workspaces }));
    try {
      return await LoomHarness.open(dir, options);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** A server on the harness folder's state dir and config file. */
  private static async open(dir: string, options: HarnessOptions): Promise<LoomHarness> {
    const stateDir = join(dir, ".loom");
    const configPath = join(dir, "loom-config.json");
    let server: LoomServer | null = null;
    try {
      server = await startLoomServer({
        stateDir,
        cwd: dir,
        configPath,
        progressIntervalMs: options.progressIntervalMs ?? 100,
        diagnosticsTools: options.diagnosticsTools ?? false,
        ...(options.log === undefined ? {} : { log: options.log }),
        ...(options.wsHeartbeatMs === undefined ? {} : { wsHeartbeatMs: options.wsHeartbeatMs }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.schedulerTimers === undefined ? {} : { schedulerTimers: options.schedulerTimers }),
        ...(options.drivers === undefined ? {} : { drivers: options.drivers }),
        ...(options.acpRegistry === undefined ? {} : { acpRegistry: options.acpRegistry }),
      });
      const ownerToken = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
      const owner = await LoomMcpClient.connect(server.mcpUrl, ownerToken, "loom-owner");
      const harness = new LoomHarness(server, dir, ownerToken, owner);
      harness.options = options;
      return harness;
    } catch (error) {
      await server?.close();
      throw error;
    }
  }

  private options: HarnessOptions = {};

  /**
   * A Loom restart: stop this server (its agent sessions end with it) and
   * start a new one on the same state dir and config. This harness is done;
   * use the one returned (close() of the new one removes the folder).
   */
  async restart(): Promise<LoomHarness> {
    for (const client of [this.owner, ...this.clients]) await client.close().catch(() => undefined);
    await this.server.close();
    return LoomHarness.open(this.dir, this.options);
  }

  get state() {
    return this.server.orchestrator.state;
  }

  /** Connect another SDK client with this token; closed with the harness. */
  async connect(token: string, name = "loom-test"): Promise<LoomMcpClient> {
    const client = await LoomMcpClient.connect(this.server.mcpUrl, token, name);
    this.clients.push(client);
    return client;
  }

  /** POST a command to the HTTP API with the owner token. */
  async dispatch(type: string, data: Record<string, unknown>, commandId = `cmd:test:${crypto.randomUUID()}`): Promise<DispatchResponse> {
    const res = await fetch(`${this.server.url}/api/orchestration/dispatch`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ type, commandId, data }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Create one thread as the owner (create_threads); with a prompt it starts a run. */
  async createThread(entry: { prompt?: string; title?: string; target?: Record<string, unknown>; runtimeMode?: string; interactionMode?: string } = {}): Promise<CreatedThread> {
    const result = await this.owner.ok<{ threads: CreatedThread[] }>("create_threads", { threads: [entry] });
    return result.threads[0]!;
  }

  /** Launch a thread in the given project, as the owner (t3_thread_launch). */
  async launch(args: Record<string, unknown>): Promise<CreatedThread> {
    return this.owner.ok<CreatedThread>("t3_thread_launch", args);
  }

  run(runId: string): Run {
    const run = this.state.runs.get(runId);
    if (run === undefined) throw new Error(`no run ${runId}`);
    return run;
  }

  runs(threadId: string): Run[] {
    return runsOf(this.state, threadId);
  }

  items(threadId: string): TurnItem[] {
    return (this.state.turnItems.get(threadId) ?? []).filter((item): item is TurnItem => item !== undefined);
  }

  /** Assistant texts of a run (or of the whole thread), in timeline order. */
  assistantTexts(threadId: string, runId?: string): string[] {
    return this.items(threadId).flatMap((item) => (item.type === "assistant_message" && (runId === undefined || item.runId === runId) ? [item.text] : []));
  }

  /**
   * Poll Loom's state until `probe` returns a value that is not undefined,
   * null or false. `what` names the wait; a function is read when the wait
   * times out, so it can report the state then. A timeout's error ends with
   * the tail of the server's log.
   */
  async until<T>(probe: () => T | undefined | null | false, what: string | (() => string), timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined && value !== null && value !== false) return value;
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}\n${this.logTail()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The server log's last lines (every server of this harness folder writes the same file). */
  logTail(lines = LOG_TAIL_LINES): string {
    try {
      const tail = readFileSync(this.server.logPath, "utf8").trimEnd().split("\n").slice(-lines);
      return `last ${tail.length} lines of ${this.server.logPath}:\n${tail.join("\n")}`;
    } catch (error) {
      return `no server log: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Wait until the run has one of `statuses`; returns the run. */
  waitForRun(runId: string, statuses: RunStatus | readonly RunStatus[], timeoutMs = 10_000): Promise<Run> {
    const wanted: readonly RunStatus[] = typeof statuses === "string" ? [statuses] : statuses;
    return this.until(
      () => {
        const run = this.state.runs.get(runId);
        return run !== undefined && wanted.includes(run.status) ? run : null;
      },
      () => `run ${runId} to be ${wanted.join(" or ")} (now ${this.state.runs.get(runId)?.status ?? "missing"})`,
      timeoutMs,
    );
  }

  /** Wait until the run is terminal. */
  waitForEnd(runId: string, timeoutMs = 10_000): Promise<Run> {
    return this.waitForRun(runId, ["completed", "failed", "interrupted", "cancelled"], timeoutMs);
  }

  /** Wait through t3_thread_wait (the MCP path) instead of polling. */
  async waitViaMcp(threadId: string, runId?: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
    return this.owner.ok("t3_thread_wait", { threadId, ...(runId === undefined ? {} : { runId }), timeoutMs });
  }

  async close(): Promise<void> {
    for (const client of [this.owner, ...this.clients]) await client.close().catch(() => undefined);
    await this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
