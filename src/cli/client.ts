import { existsSync, readFileSync } from "node:fs";
import { LoomMcpClient, type ToolCallOptions } from "../client/loomMcpClient.js";
import { type ServerInfo, readServerInfo, resolveStateDir, stateDirPaths } from "../server/stateDir.js";
import { ServerNotRunningError, ToolFailedError } from "./errors.js";

/**
 * The CLI as an outside client of a running server: it finds the server
 * through <state-dir>/server.json and calls tools as the owner, with the token
 * in <state-dir>/owner-token. It creates nothing in the state dir.
 */
export class LoomToolCaller {
  constructor(
    private readonly client: LoomMcpClient,
    readonly server: ServerInfo,
    private readonly token: string,
  ) {}

  /**
   * One owner route of the HTTP API (docs/cli.md, HTTP API). A failure answer
   * (`{ error: Failure }`) throws ToolFailedError with the server's code, as a tool failure does.
   */
  async api<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      // A non-JSON answer is reported below with its status.
    }
    if (res.ok) return parsed as T;
    // A rejected command answers 409 with its receipt ({ status: "rejected", rejection }), anything else with { error }.
    const answer = parsed as { error?: { code?: unknown; message?: unknown }; rejection?: { code?: unknown; message?: unknown } } | null;
    const error = answer?.error ?? answer?.rejection;
    throw new ToolFailedError(path, typeof error?.code === "string" ? error.code : "orchestration_error", typeof error?.message === "string" ? error.message : `HTTP ${res.status} from ${method} ${path}`);
  }

  /** The full id of a thread named by its id or a unique prefix of it. */
  async resolveThread(ref: string): Promise<string> {
    return (await this.api<{ threadId: string }>("GET", `/api/threads/resolve?id=${encodeURIComponent(ref)}`)).threadId;
  }

  /** Call a tool; a failure answer throws ToolFailedError with the server's code. */
  async call<T>(tool: string, args: Record<string, unknown>, options: ToolCallOptions = {}): Promise<T> {
    const outcome = await this.client.call(tool, args, options);
    if (outcome.isError) throw new ToolFailedError(tool, outcome.errorCode ?? "orchestration_error", outcome.errorMessage ?? "the tool failed without a message");
    return outcome.structured as T;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

export async function connectToLoom(stateDirFlag: string | undefined): Promise<LoomToolCaller> {
  const dir = stateDirPaths(resolveStateDir(stateDirFlag));
  let info: ServerInfo | null;
  try {
    info = readServerInfo(dir);
  } catch (error) {
    throw new ServerNotRunningError(dir.root, `${dir.serverInfoPath} is unreadable: ${(error as Error).message}`);
  }
  if (info === null) throw new ServerNotRunningError(dir.root);
  if (!processExists(info.pid)) throw new ServerNotRunningError(dir.root, `server.json names process ${info.pid}, which has exited`);
  if (!existsSync(dir.ownerTokenPath)) throw new Error(`the server is running but ${dir.ownerTokenPath} is missing`);
  const token = readFileSync(dir.ownerTokenPath, "utf8").trim();
  try {
    return new LoomToolCaller(await LoomMcpClient.connect(info.mcpUrl, token, "loom-cli"), info, token);
  } catch (error) {
    if ((error as { code?: unknown }).code === 401) {
      throw new Error(`the server at ${info.mcpUrl} refused the owner token in ${dir.ownerTokenPath} (HTTP 401)`, { cause: error });
    }
    if (isConnectionFailure(error)) throw new ServerNotRunningError(dir.root, `${info.url} did not answer`);
    throw error;
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** fetch rejects with a TypeError whose cause is the socket error. */
function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return error.message === "fetch failed" || code === "ECONNREFUSED" || code === "ECONNRESET" || code === "UND_ERR_SOCKET";
}
