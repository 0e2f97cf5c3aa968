import { LoomMcpClient, type ToolCallOptions } from "../client/loomMcpClient.js";
import type { ServerInfo } from "../server/stateDir.js";
import { ServerNotRunningError, ToolFailedError } from "./errors.js";
import { OwnerApi } from "./ownerApi.js";
import { findRunningServer, isConnectionFailure } from "./runningServer.js";

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
    private readonly stateDir: string,
  ) {}

  /** The owner routes of the HTTP API (docs/cli.md, HTTP API); failures throw ToolFailedError like a failed tool call. */
  get api(): OwnerApi {
    return new OwnerApi(this.server.url, this.token, this.stateDir);
  }

  /** The full id of a thread named by its id or a unique prefix of it. */
  resolveThread(ref: string): Promise<string> {
    return this.api.resolveThread(ref);
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
  const { info, token, ownerTokenPath, stateDir } = findRunningServer(stateDirFlag);
  const dir = { root: stateDir, ownerTokenPath };
  try {
    return new LoomToolCaller(await LoomMcpClient.connect(info.mcpUrl, token, "loom-cli"), info, token, stateDir);
  } catch (error) {
    if ((error as { code?: unknown }).code === 401) {
      throw new Error(`the server at ${info.mcpUrl} refused the owner token in ${dir.ownerTokenPath} (HTTP 401)`, { cause: error });
    }
    if (isConnectionFailure(error)) throw new ServerNotRunningError(dir.root, `${info.url} did not answer`);
    throw error;
  }
}
