import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LoomMcpClient } from "../client/loomMcpClient.js";
import { type ServeProcess, spawnServe, waitForExit } from "./loomProcess.js";

export interface ServedLoom {
  readonly serve: ServeProcess;
  readonly client: LoomMcpClient;
  readonly token: string;
}

/**
 * `loom serve` processes on one state dir and their MCP clients, for tests
 * that kill a server and start another on the same files. `close` ends every
 * client and stops every process still running (SIGTERM, then waits).
 */
export class ServeRig {
  private readonly live: ServeProcess[] = [];
  private readonly clients: LoomMcpClient[] = [];

  constructor(
    readonly stateDir: string,
    private readonly clientName: string,
    /** The CLI to spawn; this build's by default (a benchmark built elsewhere names dist/cli/main.js). */
    private readonly cliPath?: string,
  ) {}

  /** Start a server (`--port 0 --state-dir <stateDir>` plus `args`) and connect an owner client to it. */
  async start(options: { readonly args?: readonly string[]; readonly env?: NodeJS.ProcessEnv } = {}): Promise<ServedLoom> {
    const serve = await spawnServe(["--port", "0", "--state-dir", this.stateDir, ...(options.args ?? [])], options.env, this.cliPath === undefined ? {} : { cliPath: this.cliPath });
    this.live.push(serve);
    const token = readFileSync(join(this.stateDir, "owner-token"), "utf8").trim();
    const client = await LoomMcpClient.connect(`${serve.url}/mcp`, token, this.clientName);
    this.clients.push(client);
    return { serve, client, token };
  }

  async close(): Promise<void> {
    for (const client of this.clients.splice(0)) await client.close().catch(() => undefined);
    for (const serve of this.live.splice(0)) {
      if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill("SIGTERM");
      await waitForExit(serve.child);
    }
  }
}
