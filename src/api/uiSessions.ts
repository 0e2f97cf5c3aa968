import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { sha256 } from "./ownerAuth.js";

/** The web UI's session cookie. HttpOnly and SameSite=Strict; never readable by page scripts. */
export const UI_SESSION_COOKIE = "loom_session";
/** The header every cookie-authenticated write must carry (a cross-site form or image cannot set it). */
export const UI_CSRF_HEADER = "x-loom-csrf";

export interface UiSessionBookOptions {
  /** Where the session hashes persist (mode 0600), so a restarted server keeps its signed-in browsers. */
  readonly file: string;
  /** How long a login link may wait to be opened. Default 5 minutes. */
  readonly loginTtlMs?: number;
  /** How long a session lasts. Default 30 days. */
  readonly sessionTtlMs?: number;
  /** Sessions kept at most; the oldest go first. Default 100. */
  readonly maxSessions?: number;
  readonly clock?: () => number;
}

interface StoredSession {
  /** hex SHA-256 of the cookie value. */
  readonly hash: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

/**
 * Sign-in for the web UI (docs/ui.md, "Signing in"). `loom open` asks the
 * server, as the owner, for a one-time login code; opening the login URL
 * redeems the code for a session cookie. Only SHA-256 hashes of codes and
 * session tokens are kept: codes in memory, sessions in a 0600 file.
 */
export class UiSessionBook {
  private readonly codes = new Map<string, number>();
  private sessions: StoredSession[];
  private readonly loginTtlMs: number;
  private readonly sessionTtlMs: number;
  private readonly maxSessions: number;
  private readonly clock: () => number;

  constructor(private readonly options: UiSessionBookOptions) {
    this.loginTtlMs = options.loginTtlMs ?? 5 * 60_000;
    this.sessionTtlMs = options.sessionTtlMs ?? 30 * 24 * 3_600_000;
    this.maxSessions = options.maxSessions ?? 100;
    this.clock = options.clock ?? Date.now;
    this.sessions = readSessions(options.file).filter((s) => s.expiresAt > this.clock());
  }

  get sessionMaxAgeSeconds(): number {
    return Math.floor(this.sessionTtlMs / 1000);
  }

  /** A fresh single-use login code. */
  issueLoginCode(): { readonly code: string; readonly expiresAt: number } {
    const now = this.clock();
    for (const [key, expiresAt] of this.codes) if (expiresAt <= now) this.codes.delete(key);
    const code = randomBytes(32).toString("base64url");
    const expiresAt = now + this.loginTtlMs;
    this.codes.set(hashOf(code), expiresAt);
    return { code, expiresAt };
  }

  /** Spend a login code: the new session's cookie value, or null when the code is unknown, used or expired. */
  redeemLoginCode(code: string): string | null {
    const key = hashOf(code);
    const expiresAt = this.codes.get(key);
    this.codes.delete(key);
    if (expiresAt === undefined || expiresAt <= this.clock()) return null;
    const token = randomBytes(32).toString("base64url");
    const now = this.clock();
    this.sessions = [...this.sessions.filter((s) => s.expiresAt > now), { hash: hashOf(token), expiresAt: now + this.sessionTtlMs }].slice(-this.maxSessions);
    this.persist();
    return token;
  }

  isSession(token: string | null): boolean {
    if (token === null || token === "") return false;
    const key = hashOf(token);
    const now = this.clock();
    return this.sessions.some((s) => s.hash === key && s.expiresAt > now);
  }

  /** End a session (sign out). */
  revoke(token: string | null): void {
    if (token === null) return;
    const key = hashOf(token);
    const before = this.sessions.length;
    this.sessions = this.sessions.filter((s) => s.hash !== key);
    if (this.sessions.length !== before) this.persist();
  }

  private persist(): void {
    const tmp = `${this.options.file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ sessions: this.sessions })}\n`, { mode: 0o600 });
    renameSync(tmp, this.options.file);
  }
}

function hashOf(secret: string): string {
  return sha256(secret).toString("hex");
}

function readSessions(file: string): StoredSession[] {
  if (!existsSync(file)) return [];
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { sessions?: unknown };
    if (!Array.isArray(parsed.sessions)) return [];
    return parsed.sessions.filter(
      (s): s is StoredSession => typeof (s as StoredSession).hash === "string" && typeof (s as StoredSession).expiresAt === "number",
    );
  } catch {
    // An unreadable file signs every browser out; it is rewritten at the next sign-in.
    return [];
  }
}

/** The session cookie of a request, or null. */
export function sessionCookie(req: IncomingMessage): string | null {
  const header = req.headers.cookie;
  if (typeof header !== "string") return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === UI_SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * True when a request is the signed-in UI's: a valid session cookie and, for
 * anything but a read, the server's own Origin and the CSRF header. SameSite=
 * Strict already keeps the cookie off cross-site requests; the header makes a
 * forged write need a CORS preflight the server never grants.
 */
export function isUiSessionRequest(req: IncomingMessage, book: UiSessionBook, allowedOrigins: () => readonly string[]): boolean {
  if (!book.isSession(sessionCookie(req))) return false;
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return true;
  const origin = req.headers.origin;
  return typeof origin === "string" && allowedOrigins().includes(origin) && req.headers[UI_CSRF_HEADER] === "1";
}
