import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

/**
 * What a webhook task needs besides its log record: the URL's token (so its
 * URL can be shown again) and the signing secret. Neither ever enters the
 * event log, which keeps only the token's SHA-256 and whether a signature is
 * required. Kept in one owner-only file in the state dir, read on every use,
 * so every Loom node on the state dir sees the same keys.
 */
export interface WebhookKeys {
  readonly token: string;
  readonly secret: string | null;
}

export interface WebhookKeyStore {
  get(scheduledTaskId: string): WebhookKeys | null;
  put(scheduledTaskId: string, keys: WebhookKeys): void;
  remove(scheduledTaskId: string): void;
}

/** A fresh 128-bit URL token, as 32 hex digits. */
export function newWebhookToken(): string {
  return randomBytes(16).toString("hex");
}

export function tokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The key file `<state-dir>/webhook-keys.json`, mode 0600, replaced atomically on every change. */
export class FileWebhookKeyStore implements WebhookKeyStore {
  constructor(private readonly path: string) {}

  get(scheduledTaskId: string): WebhookKeys | null {
    return this.read()[scheduledTaskId] ?? null;
  }

  put(scheduledTaskId: string, keys: WebhookKeys): void {
    this.write({ ...this.read(), [scheduledTaskId]: keys });
  }

  remove(scheduledTaskId: string): void {
    const all = this.read();
    if (!(scheduledTaskId in all)) return;
    delete all[scheduledTaskId];
    this.write(all);
  }

  private read(): Record<string, WebhookKeys> {
    if (!existsSync(this.path)) return {};
    return JSON.parse(readFileSync(this.path, "utf8")) as Record<string, WebhookKeys>;
  }

  private write(all: Record<string, WebhookKeys>): void {
    const temp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(all), { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.path);
  }
}

/** Keys held in memory: for a process that keeps no state dir (the deterministic simulator). */
export class MemoryWebhookKeyStore implements WebhookKeyStore {
  private readonly keys = new Map<string, WebhookKeys>();

  get(scheduledTaskId: string): WebhookKeys | null {
    return this.keys.get(scheduledTaskId) ?? null;
  }

  put(scheduledTaskId: string, keys: WebhookKeys): void {
    this.keys.set(scheduledTaskId, keys);
  }

  remove(scheduledTaskId: string): void {
    this.keys.delete(scheduledTaskId);
  }
}
