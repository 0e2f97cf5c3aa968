import { join } from "node:path";
import { createStream, type RotatingFileStream } from "rotating-file-stream";
import { LOG_LEVELS, type LogLevel } from "../config/config.js";

/**
 * The server's log file, `<state-dir>/logs/loom.log`: one line per entry
 * (`<ISO time> <LEVEL> <text>`), rotated by size into loom.log.1, .2, ...
 * (rotating-file-stream). Entries above the level are dropped. Every line
 * passes `redact` first: known secrets and bearer tokens never reach the file.
 */
export interface ServerLog {
  write(level: LogLevel, line: string): void;
  /** The config's settings, once it is read; rotation applies from the first line written. */
  configure(options: ServerLogOptions): void;
  /** Never write this value (a token the server holds). */
  addSecret(secret: string): void;
  close(): Promise<void>;
  readonly path: string;
}

export interface ServerLogOptions {
  readonly level: LogLevel;
  readonly maxFileBytes: number;
  readonly maxFiles: number;
}

export const LOG_FILE = "loom.log";

export function openServerLog(stateRoot: string, options: ServerLogOptions): ServerLog {
  const dir = join(stateRoot, "logs");
  let rotation = { size: options.maxFileBytes, maxFiles: options.maxFiles };
  // Opened on the first line: the config, read after the log exists, may change the rotation first.
  let stream: RotatingFileStream | null = null;
  let rank = LOG_LEVELS.indexOf(options.level);
  const secrets: string[] = [];
  let closed = false;
  // The library asks for the current file's name with a null time, a rotated one's with its index.
  const name = ((time: number | Date | null, index?: number) => (time === null ? LOG_FILE : `${LOG_FILE}.${index ?? 1}`)) as (time: number | Date, index?: number) => string;
  const open = (): RotatingFileStream => {
    if (stream !== null) return stream;
    stream = createStream(name, {
      path: dir,
      size: `${Math.max(1, Math.ceil(rotation.size / 1024))}K`,
      maxFiles: rotation.maxFiles,
      mode: 0o600,
    });
    // A log that cannot be written must not stop the server.
    stream.on("error", () => undefined);
    return stream;
  };
  return {
    path: join(dir, LOG_FILE),
    write(level, line) {
      if (closed || LOG_LEVELS.indexOf(level) > rank) return;
      open().write(`${new Date().toISOString()} ${level.toUpperCase()} ${redact(line, secrets)}\n`);
    },
    configure(next) {
      rank = LOG_LEVELS.indexOf(next.level);
      rotation = { size: next.maxFileBytes, maxFiles: next.maxFiles };
    },
    addSecret(secret) {
      if (secret.length >= 8) secrets.push(secret);
    },
    async close() {
      if (closed) return;
      closed = true;
      const open = stream;
      if (open === null) return;
      await new Promise<void>((resolve) => {
        open.end(() => resolve());
      });
    },
  };
}

/** Bearer credentials and 32-byte base64url tokens (the owner's and agents' MCP tokens) in a line. */
const BEARER = /\bBearer\s+[^\s"',;]+/gi;
const TOKEN_SHAPED = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;

export function redact(line: string, secrets: readonly string[] = []): string {
  let out = line;
  for (const secret of secrets) out = out.split(secret).join("[redacted]");
  return out.replace(BEARER, "Bearer [redacted]").replace(TOKEN_SHAPED, "[redacted]");
}
