import { startLoomServer } from "../server/loomServer.js";
import { resolveStateDir } from "../server/stateDir.js";
import { ExitCode, UsageError } from "./errors.js";
import { oneOf } from "./args.js";
import { LOG_LEVELS } from "../config/config.js";

/** How long a node that stopped itself waits for its last connections before it exits anyway. */
const HALT_EXIT_MS = 5_000;

export interface ServeArgs {
  readonly host: string | undefined;
  readonly port: string | undefined;
  readonly stateDir: string | undefined;
  readonly config: string | undefined;
  /** postgres://... : the shared PostgreSQL database instead of SQLite (docs/postgres.md). */
  readonly database?: string | undefined;
  /** Overrides the config's log.level. */
  readonly logLevel?: string | undefined;
}

/** Run the server until SIGINT or SIGTERM, then shut down cleanly; rejects when the node stopped itself after losing its leases. */
export async function runServe(args: ServeArgs): Promise<number> {
  const port = args.port === undefined ? 0 : Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got "${args.port}"`);
  }
  const logLevel = oneOf("log-level", args.logLevel, LOG_LEVELS);
  const server = await startLoomServer({
    ...(logLevel === undefined ? {} : { logLevel }),
    stateDir: resolveStateDir(args.stateDir),
    host: args.host ?? "127.0.0.1",
    port,
    configPath: args.config,
    ...(args.database === undefined ? {} : { database: parseDatabaseUrl(args.database) }),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify({ url: server.url, mcpUrl: server.mcpUrl, environmentId: server.environmentId })}\n`);
  const stopped = await new Promise<"signal" | Error>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`loom: ${signal} received, shutting down\n`);
      resolve("signal");
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
    void server.halted.then(resolve);
  });
  if (stopped !== "signal") {
    // The node stopped itself (docs/postgres.md "When a node dies"). A connection stuck on an
    // unreachable database must not keep a node without leases alive.
    setTimeout(() => process.exit(ExitCode.failure), HALT_EXIT_MS).unref();
    throw stopped;
  }
  await server.close();
  return 0;
}

function parseDatabaseUrl(value: string): string {
  if (!/^postgres(ql)?:\/\/[^/]/.test(value)) throw new UsageError(`--database must be a postgres:// URL (postgres://user:password@host:port/database), got "${value.replace(/:[^:@/]*@/, ":***@")}"`);
  return value;
}
