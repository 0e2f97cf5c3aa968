import { ServerNotRunningError, ToolFailedError } from "./errors.js";
import { findRunningServer, isConnectionFailure } from "./runningServer.js";

/**
 * The CLI's client of the running server's HTTP API, as its owner (the
 * routes that have no MCP tool: diffs, worktrees). A failure answer throws
 * ToolFailedError with the server's code, so it prints and exits like a
 * failed tool call.
 */
export class OwnerApi {
  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly stateDir: string,
  ) {}

  static connect(stateDirFlag: string | undefined): OwnerApi {
    const server = findRunningServer(stateDirFlag);
    return new OwnerApi(server.info.url, server.token, server.stateDir);
  }

  get<T>(path: string, query: Readonly<Record<string, string | undefined>> = {}): Promise<T> {
    const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const search = params.size === 0 ? "" : `?${params.toString()}`;
    return this.request<T>("GET", `${path}${search}`);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  /** The full id of a thread named by its id or a unique prefix of it. */
  async resolveThread(ref: string): Promise<string> {
    return (await this.get<{ threadId: string }>("/api/threads/resolve", { id: ref })).threadId;
  }

  async request<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      if (isConnectionFailure(error)) throw new ServerNotRunningError(this.stateDir, `${this.url} did not answer`);
      throw error;
    }
    const answer = (await res.json().catch(() => null)) as { error?: { code?: unknown; message?: unknown }; rejection?: { code?: unknown; message?: unknown } } | null;
    if (res.ok) return answer as T;
    // A rejected command answers 409 with its receipt ({ status: "rejected", rejection }), anything else with { error }.
    const error = answer?.error ?? answer?.rejection;
    throw new ToolFailedError(path, typeof error?.code === "string" ? error.code : `http_${res.status}`, typeof error?.message === "string" ? error.message : `HTTP ${res.status} from ${method} ${path}`);
  }
}
