import { randomBytes, randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The state directory (README "State directory"):
 *   loom.db (+ -wal, -shm)  the SQLite event log
 *   owner-token             the outside clients' credential, mode 0600, made once
 *   environment-id          this environment's stable id, made once
 *   server.json             { url, mcpUrl, pid, environmentId, startedAt } while a server runs
 *   config.json             optional configuration
 *   guest-share.key         the key guest share links are signed with, mode 0600, made once (src/app/guestShare/shareKey.ts)
 */
export interface StateDir {
  readonly root: string;
  readonly databasePath: string;
  readonly serverInfoPath: string;
  readonly defaultConfigPath: string;
  readonly ownerTokenPath: string;
}

export interface ServerInfo {
  readonly url: string;
  readonly mcpUrl: string;
  readonly pid: number;
  readonly environmentId: string;
  readonly startedAt: string;
}

/** `--state-dir`, else `$LOOM_STATE_DIR`, else `~/.loom`. */
export function resolveStateDir(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(explicit ?? env.LOOM_STATE_DIR ?? join(homedir(), ".loom"));
}

/** Create the state directory (mode 0700) if needed; the server's way in. */
export function openStateDir(root: string): StateDir {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return stateDirPaths(root);
}

/** The state directory's paths, creating nothing: an outside client's way in. */
export function stateDirPaths(root: string): StateDir {
  return {
    root,
    databasePath: join(root, "loom.db"),
    serverInfoPath: join(root, "server.json"),
    defaultConfigPath: join(root, "config.json"),
    ownerTokenPath: join(root, "owner-token"),
  };
}

/** The owner token, created on first use with mode 0600 and reused afterwards. */
export function ensureOwnerToken(dir: StateDir): string {
  if (existsSync(dir.ownerTokenPath)) {
    const token = readFileSync(dir.ownerTokenPath, "utf8").trim();
    if (token.length >= 32) {
      chmodSync(dir.ownerTokenPath, 0o600);
      return token;
    }
  }
  const token = randomBytes(32).toString("base64url");
  writeAtomically(dir.ownerTokenPath, `${token}\n`, 0o600);
  return token;
}

/** The environment id, created once so thread links stay valid across restarts. */
export function ensureEnvironmentId(dir: StateDir): string {
  const path = join(dir.root, "environment-id");
  if (existsSync(path)) {
    const id = readFileSync(path, "utf8").trim();
    if (id !== "") return id;
  }
  const id = `env:${randomUUID()}`;
  writeAtomically(path, `${id}\n`, 0o600);
  return id;
}

export function writeServerInfo(dir: StateDir, info: ServerInfo): void {
  writeAtomically(dir.serverInfoPath, `${JSON.stringify(info, null, 2)}\n`, 0o600);
}

export function readServerInfo(dir: StateDir): ServerInfo | null {
  if (!existsSync(dir.serverInfoPath)) return null;
  return JSON.parse(readFileSync(dir.serverInfoPath, "utf8")) as ServerInfo;
}

export function removeServerInfo(dir: StateDir, pid: number): void {
  const info = readServerInfo(dir);
  if (info?.pid === pid) rmSync(dir.serverInfoPath, { force: true });
}

function writeAtomically(path: string, content: string, mode: number): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, content, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}
