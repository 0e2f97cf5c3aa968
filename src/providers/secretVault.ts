import { inspect } from "node:util";

/**
 * Owner-supplied secrets (request_secret), held in this process's memory
 * only, per provider session: the session that asked gets them as
 * environment variables of the turns it starts afterwards, and they are
 * dropped when that session is released. Nothing here is written anywhere:
 * not the event log, not a projection, not a log line. A restart forgets
 * them, as it ends every session.
 */
export class SecretVault {
  readonly #bySession = new Map<string, Map<string, string>>();

  /** Hold `value` for the session under `envVarName` (replacing an earlier one). */
  put(providerSessionId: string, envVarName: string, value: string): void {
    let secrets = this.#bySession.get(providerSessionId);
    if (secrets === undefined) {
      secrets = new Map();
      this.#bySession.set(providerSessionId, secrets);
    }
    secrets.set(envVarName, value);
  }

  /** Forget one secret of a session (a supply whose record was refused). */
  remove(providerSessionId: string, envVarName: string): void {
    const secrets = this.#bySession.get(providerSessionId);
    secrets?.delete(envVarName);
    if (secrets?.size === 0) this.#bySession.delete(providerSessionId);
  }

  /** The environment a session's next turn gets: empty when it holds no secret. */
  environmentFor(providerSessionId: string): Readonly<Record<string, string>> {
    const secrets = this.#bySession.get(providerSessionId);
    return secrets === undefined ? {} : Object.fromEntries(secrets);
  }

  /** Drop everything a session held (it was released). */
  dropSession(providerSessionId: string): void {
    this.#bySession.delete(providerSessionId);
  }

  /** How many sessions hold secrets (for tests and diagnostics; never the values). */
  get sessionCount(): number {
    return this.#bySession.size;
  }

  /** Never show values when logged or inspected by accident. */
  toJSON(): string {
    return "[SecretVault]";
  }

  [inspect.custom](): string {
    return `SecretVault { sessions: ${this.#bySession.size} }`;
  }
}
