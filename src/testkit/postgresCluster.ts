import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

/**
 * A private PostgreSQL cluster for tests and benchmarks: initdb and pg_ctl in
 * a temporary folder, listening on 127.0.0.1 only (no Unix socket) on a free
 * port, password-authenticated, no Docker. `stop()` shuts it down and
 * deletes the folder. With LOOM_TEST_POSTGRES_URL set, tests use that server
 * instead (it must let its user create databases) and start nothing.
 */
export interface PostgresCluster {
  /** Connection string of the maintenance database `postgres`. */
  readonly adminUrl: string;
  /** Create an empty database; returns its connection string. */
  createDatabase(): Promise<string>;
  /** Drop a database made by createDatabase, disconnecting whoever still uses it. */
  dropDatabase(url: string): Promise<void>;
  /** Stop the server (a private cluster) and remove what was created. Idempotent. */
  stop(): Promise<void>;
}

export interface PostgresClusterOptions {
  /**
   * Keep PostgreSQL's crash-safety settings (fsync, synchronous commit, full
   * page writes), as a real deployment would: for benchmarks. Tests default to
   * false, which turns them off: a test cluster never survives a crash anyway.
   */
  readonly durable?: boolean;
}

/** Thrown when no PostgreSQL server binaries can be found; its message says how to install them. */
export class PostgresUnavailableError extends Error {
  override readonly name = "PostgresUnavailableError";
}

const INSTALL_HINT =
  "Install Debian's PostgreSQL server with `apt-get update && apt-get install -y postgresql` (.ci/run does this), " +
  "or set LOOM_POSTGRES_BIN to a folder holding initdb and pg_ctl, " +
  "or point the tests at a running server with LOOM_TEST_POSTGRES_URL=postgres://user:password@127.0.0.1:5432/postgres.";

/** The operating-system user that runs the server when this process is root (initdb refuses root). */
const SERVER_USER = "postgres";

const run = promisify(execFile);

/**
 * The folder holding initdb, pg_ctl and postgres: LOOM_POSTGRES_BIN, else the
 * newest Debian install (/usr/lib/postgresql/<major>/bin), else the PATH.
 */
export function findPostgresBinaries(env: NodeJS.ProcessEnv = process.env, debianRoot = "/usr/lib/postgresql"): string {
  const hasServer = (dir: string) => ["initdb", "pg_ctl", "postgres"].every((name) => existsSync(join(dir, name)));
  const explicit = env.LOOM_POSTGRES_BIN;
  if (explicit !== undefined && explicit !== "") {
    if (hasServer(explicit)) return explicit;
    throw new PostgresUnavailableError(`LOOM_POSTGRES_BIN=${explicit} has no initdb, pg_ctl and postgres. ${INSTALL_HINT}`);
  }
  const majors = existsSync(debianRoot)
    ? readdirSync(debianRoot).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))
    : [];
  const candidates = [...majors.map((major) => join(debianRoot, major, "bin")), ...(env.PATH ?? "").split(delimiter).filter(Boolean)];
  const found = candidates.find(hasServer);
  if (found !== undefined) return found;
  throw new PostgresUnavailableError(`PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in ${debianRoot}/<version>/bin or on the PATH. ${INSTALL_HINT}`);
}

/** A private cluster, or the server named by LOOM_TEST_POSTGRES_URL when set. */
export function startTestPostgres(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const url = process.env.LOOM_TEST_POSTGRES_URL;
  return url !== undefined && url !== "" ? Promise.resolve(new DatabaseFactory(url, () => Promise.resolve())) : startPostgresCluster(options);
}

/** initdb + pg_ctl start in a fresh temporary folder. */
export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const bin = findPostgresBinaries();
  const owner = serverOwner();
  const dir = mkdtempSync(join(tmpdir(), "loom-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const asOwner = (command: string, args: readonly string[]) =>
    owner === null
      ? run(join(bin, command), [...args], { cwd: dir, timeout: 120_000 })
      : run("runuser", ["-u", SERVER_USER, "--", join(bin, command), ...args], { cwd: dir, timeout: 120_000 });
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    if (owner !== null) chownSync(dir, owner.uid, owner.gid);
    const password = randomBytes(18).toString("hex");
    const passwordFile = join(dir, "password");
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner !== null) chownSync(passwordFile, owner.uid, owner.gid);
    await asOwner("initdb", ["-D", data, "-U", "loom", `--pwfile=${passwordFile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync"]);
    rmSync(passwordFile);
    appendFileSync(join(data, "postgresql.conf"), serverSettings(options.durable === true));

    let port = 0;
    for (let attempt = 1; ; attempt += 1) {
      port = await freePort();
      try {
        await asOwner("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "60", "-o", `-p ${port}`, "start"]);
        break;
      } catch (error) {
        // Another process may have taken the port between the probe and the start.
        const serverLog = existsSync(log) ? readFileSync(log, "utf8") : "";
        if (attempt < 3 && /could not bind|already in use/i.test(serverLog)) continue;
        throw new Error(`pg_ctl start failed: ${String(error)}\n${serverLog.slice(-2_000)}`);
      }
    }
    const stopServer = () => asOwner("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]).then(() => undefined);
    // If the process exits without stop(), do not leave a server running.
    const onExit = () => {
      const args = [join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop"];
      if (owner === null) spawnSync(args[0]!, args.slice(1), { stdio: "ignore" });
      else spawnSync("runuser", ["-u", SERVER_USER, "--", ...args], { stdio: "ignore" });
      remove();
    };
    process.once("exit", onExit);
    const adminUrl = `postgres://loom:${password}@127.0.0.1:${port}/postgres`;
    return new DatabaseFactory(adminUrl, async () => {
      process.removeListener("exit", onExit);
      await stopServer();
      remove();
    });
  } catch (error) {
    remove();
    throw error;
  }
}

/** Creates and drops databases on a server; `shutdown` stops the server when it is private. */
class DatabaseFactory implements PostgresCluster {
  private created = 0;
  private stopped: Promise<void> | null = null;
  private readonly prefix = `loom_test_${process.pid}_${randomBytes(3).toString("hex")}`;

  constructor(
    readonly adminUrl: string,
    private readonly shutdown: () => Promise<void>,
  ) {}

  async createDatabase(): Promise<string> {
    this.created += 1;
    const name = `${this.prefix}_${this.created}`;
    await this.admin(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    const url = new URL(this.adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async dropDatabase(url: string): Promise<void> {
    const name = decodeURIComponent(new URL(url).pathname.slice(1));
    await this.admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
}

/** Settings appended to postgresql.conf: loopback only, no Unix socket, and speed over safety unless durable. */
function serverSettings(durable: boolean): string {
  const lines = ["listen_addresses = '127.0.0.1'", "unix_socket_directories = ''", "max_connections = 200"];
  if (!durable) lines.push("fsync = off", "synchronous_commit = off", "full_page_writes = off");
  return `\n# loom test cluster\n${lines.join("\n")}\n`;
}

/** Who runs the server: null for this process's own user, or the postgres system user when this process is root. */
function serverOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = spawnSync("id", ["-u", SERVER_USER], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", SERVER_USER], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new PostgresUnavailableError(
      `initdb refuses to run as root, and there is no '${SERVER_USER}' system user to run the server as. ${INSTALL_HINT}`,
    );
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
