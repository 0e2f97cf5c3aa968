import { existsSync, readFileSync } from "node:fs";
import { type ServerInfo, readServerInfo, resolveStateDir, stateDirPaths } from "../server/stateDir.js";
import { ServerNotRunningError } from "./errors.js";

/**
 * Where the CLI finds a running server: <state-dir>/server.json names it and
 * <state-dir>/owner-token holds the owner's token. Both outside clients, the
 * MCP tool caller (client.ts) and the HTTP API client (ownerApi.ts), start
 * here.
 */

/** The running server of a state dir and the owner token: what every outside client needs. */
export interface RunningServer {
  readonly info: ServerInfo;
  readonly token: string;
  readonly ownerTokenPath: string;
  readonly stateDir: string;
}

export function findRunningServer(stateDirFlag: string | undefined): RunningServer {
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
  return { info, token: readFileSync(dir.ownerTokenPath, "utf8").trim(), ownerTokenPath: dir.ownerTokenPath, stateDir: dir.root };
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
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return error.message === "fetch failed" || code === "ECONNREFUSED" || code === "ECONNRESET" || code === "UND_ERR_SOCKET";
}
