import { createHash, randomBytes as nodeRandomBytes } from "node:crypto";
import { TOOL_PROFILES, ToolProfile } from "../contracts/tools/discoveryTools.js";

/**
 * Bearer credentials for Loom's MCP endpoint (DESIGN invariant 8, spec 000
 * Transport And Authentication). Before a provider session opens, the session
 * manager issues a credential scoped to (environment, thread, provider
 * instance, provider session) and hands the raw token to the agent. The
 * registry keeps only the token's SHA-256 hash: the raw token is returned once
 * by `issue()` and is never stored, logged or written to the event log.
 * Lookup is by hash, so no constant-time comparison is needed.
 *
 * State is in memory on purpose: a restart invalidates every token, and the
 * sessions that held them are reopened with fresh ones.
 */

export const McpCapability = {
  preview: "preview",
  orchestration: "orchestration",
} as const;
export type McpCapability = (typeof McpCapability)[keyof typeof McpCapability];
export const MCP_CREDENTIAL_CAPABILITIES: readonly McpCapability[] = [McpCapability.preview, McpCapability.orchestration];

export interface CredentialScopeInput {
  readonly environmentId: string;
  readonly threadId: string;
  readonly providerInstanceId: string;
  readonly providerSessionId: string;
}

/** A provider session acting for one thread. */
export interface ThreadInvocationScope extends CredentialScopeInput {
  readonly kind: "thread";
  readonly credentialId: string;
  readonly capabilities: readonly McpCapability[];
  /** Which tools tools/list shows this credential (its provider instance's `toolProfile`); every tool stays callable. */
  readonly toolProfile: ToolProfile;
}

/** The state directory's owner (CLI, UI): not tied to a thread. */
export interface OwnerInvocationScope {
  readonly kind: "owner";
  readonly environmentId: string;
  readonly threadId: null;
  readonly capabilities: readonly McpCapability[];
  readonly toolProfile: typeof ToolProfile.full;
}

/** What tool handlers receive for an authenticated request. */
export type McpInvocationScope = ThreadInvocationScope | OwnerInvocationScope;

export const CredentialRejection = {
  unknown: "unknown",
  expired: "expired",
  revoked: "revoked",
} as const;
export type CredentialRejection = (typeof CredentialRejection)[keyof typeof CredentialRejection];

export type CredentialResolution =
  | { readonly ok: true; readonly scope: McpInvocationScope }
  | { readonly ok: false; readonly reason: CredentialRejection };

export interface IssueOptions {
  /** Defaults to every capability (MCP_CREDENTIAL_CAPABILITIES). */
  readonly capabilities?: readonly McpCapability[];
  /** Defaults to full: tools/list shows every tool. */
  readonly toolProfile?: ToolProfile;
}

export interface IssuedCredential {
  /** The raw bearer token. Pass it to the agent; do not keep or log it. */
  readonly token: string;
  readonly credentialId: string;
  /** Absolute expiry (epoch ms). Idleness may end the credential sooner. */
  readonly expiresAt: number;
}

export interface McpCredentialRegistryOptions {
  /** The environment the owner token acts in. */
  readonly environmentId: string;
  readonly idleTtlMs?: number;
  readonly maxLifetimeMs?: number;
  /** How many revoked or expired hashes are remembered to tell them from unknown. */
  readonly rememberLimit?: number;
  readonly now?: () => number;
  readonly randomBytes?: (size: number) => Buffer;
}

export const DEFAULT_IDLE_TTL_MS = 30 * 60_000;
export const DEFAULT_MAX_LIFETIME_MS = 24 * 60 * 60_000;
export const DEFAULT_REMEMBER_LIMIT = 10_000;
const TOKEN_BYTES = 32;
const CREDENTIAL_ID_BYTES = 12;

export class McpCredentialError extends Error {
  constructor(
    readonly code: "invalid_scope" | "invalid_owner_token" | "token_collision",
    message: string,
  ) {
    super(message);
    this.name = "McpCredentialError";
  }
}

interface LiveCredential {
  readonly scope: ThreadInvocationScope;
  readonly expiresAt: number;
  lastUsedAt: number;
}

type Ended = "expired" | "revoked";

export class McpCredentialRegistry {
  private readonly environmentId: string;
  private readonly idleTtlMs: number;
  private readonly maxLifetimeMs: number;
  private readonly rememberLimit: number;
  private readonly now: () => number;
  private readonly randomBytes: (size: number) => Buffer;
  /** Keyed by token hash; never by raw token. */
  private readonly live = new Map<string, LiveCredential>();
  private readonly hashById = new Map<string, string>();
  /** Ended token hashes, oldest first, bounded by rememberLimit. */
  private readonly ended = new Map<string, Ended>();
  private ownerHash: string | null = null;

  constructor(options: McpCredentialRegistryOptions) {
    this.environmentId = options.environmentId;
    this.idleTtlMs = options.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
    this.maxLifetimeMs = options.maxLifetimeMs ?? DEFAULT_MAX_LIFETIME_MS;
    this.rememberLimit = options.rememberLimit ?? DEFAULT_REMEMBER_LIMIT;
    this.now = options.now ?? Date.now;
    this.randomBytes = options.randomBytes ?? nodeRandomBytes;
  }

  /**
   * Mint a credential. It grants the preview and orchestration capabilities
   * unless `options.capabilities` narrows them (e.g. a preview-only observer).
   */
  issue(input: CredentialScopeInput, options: IssueOptions = {}): IssuedCredential {
    for (const key of ["environmentId", "threadId", "providerInstanceId", "providerSessionId"] as const) {
      if (typeof input[key] !== "string" || input[key] === "") {
        throw new McpCredentialError("invalid_scope", `credential scope needs a non-empty ${key}`);
      }
    }
    const capabilities = options.capabilities ?? MCP_CREDENTIAL_CAPABILITIES;
    if (capabilities.some((capability) => !MCP_CREDENTIAL_CAPABILITIES.includes(capability))) {
      throw new McpCredentialError("invalid_scope", "credential capabilities must be preview and/or orchestration");
    }
    const toolProfile = issuedToolProfile(options);
    const token = this.randomBytes(TOKEN_BYTES).toString("base64url");
    const credentialId = `mcp-credential:${this.randomBytes(CREDENTIAL_ID_BYTES).toString("hex")}`;
    const hash = hashToken(token);
    if (this.live.has(hash) || this.ended.has(hash) || hash === this.ownerHash || this.hashById.has(credentialId)) {
      throw new McpCredentialError("token_collision", "random source repeated a value; refusing to issue");
    }
    const now = this.now();
    const expiresAt = now + this.maxLifetimeMs;
    const scope: ThreadInvocationScope = {
      kind: "thread",
      credentialId,
      environmentId: input.environmentId,
      threadId: input.threadId,
      providerInstanceId: input.providerInstanceId,
      providerSessionId: input.providerSessionId,
      capabilities: [...new Set(capabilities)],
      toolProfile,
    };
    this.live.set(hash, { scope, expiresAt, lastUsedAt: now });
    this.hashById.set(credentialId, hash);
    return { token, credentialId, expiresAt };
  }

  /** Look a bearer token up. Success refreshes the idle timer. */
  resolve(token: string): CredentialResolution {
    if (typeof token !== "string" || token === "") {
      return { ok: false, reason: CredentialRejection.unknown };
    }
    const hash = hashToken(token);
    if (hash === this.ownerHash) {
      return { ok: true, scope: this.ownerScope() };
    }
    const credential = this.live.get(hash);
    if (credential === undefined) {
      return { ok: false, reason: this.ended.get(hash) ?? CredentialRejection.unknown };
    }
    const now = this.now();
    if (this.isExpired(credential, now)) {
      this.end(hash, credential, "expired");
      return { ok: false, reason: CredentialRejection.expired };
    }
    credential.lastUsedAt = now;
    return { ok: true, scope: credential.scope };
  }

  /**
   * True while the credential is neither revoked nor expired. Unlike
   * `resolve()` it does not refresh the idle timer: holders of open MCP
   * sessions use it to notice that their credential has ended.
   */
  isActive(credentialId: string): boolean {
    const hash = this.hashById.get(credentialId);
    const credential = hash === undefined ? undefined : this.live.get(hash);
    return credential !== undefined && !this.isExpired(credential, this.now());
  }

  /** True when a live credential was revoked. */
  revoke(credentialId: string): boolean {
    const hash = this.hashById.get(credentialId);
    const credential = hash === undefined ? undefined : this.live.get(hash);
    if (hash === undefined || credential === undefined) {
      return false;
    }
    this.end(hash, credential, "revoked");
    return true;
  }

  /** Revoke every credential of a released provider session; returns how many. */
  revokeSession(providerSessionId: string): number {
    let count = 0;
    for (const [hash, credential] of [...this.live]) {
      if (credential.scope.providerSessionId === providerSessionId) {
        this.end(hash, credential, "revoked");
        count += 1;
      }
    }
    return count;
  }

  /**
   * Accept the state directory's owner token (no expiry). Registering another
   * token replaces it; the old one then resolves as revoked.
   */
  registerOwnerToken(token: string): void {
    if (typeof token !== "string" || token.length < 16) {
      throw new McpCredentialError("invalid_owner_token", "owner token must be a string of at least 16 characters");
    }
    const hash = hashToken(token);
    if (this.ownerHash !== null && this.ownerHash !== hash) {
      this.remember(this.ownerHash, "revoked");
    }
    this.ended.delete(hash);
    this.ownerHash = hash;
  }

  /** Drop expired credentials; returns how many were dropped. */
  sweep(): number {
    const now = this.now();
    let count = 0;
    for (const [hash, credential] of [...this.live]) {
      if (this.isExpired(credential, now)) {
        this.end(hash, credential, "expired");
        count += 1;
      }
    }
    return count;
  }

  /** Live thread credentials, expired-but-unswept ones included. */
  get size(): number {
    return this.live.size;
  }

  private ownerScope(): OwnerInvocationScope {
    return { kind: "owner", environmentId: this.environmentId, threadId: null, capabilities: MCP_CREDENTIAL_CAPABILITIES, toolProfile: ToolProfile.full };
  }

  private isExpired(credential: LiveCredential, now: number): boolean {
    return now >= credential.expiresAt || now - credential.lastUsedAt >= this.idleTtlMs;
  }

  private end(hash: string, credential: LiveCredential, why: Ended): void {
    this.live.delete(hash);
    this.hashById.delete(credential.scope.credentialId);
    this.remember(hash, why);
  }

  private remember(hash: string, why: Ended): void {
    this.ended.delete(hash);
    this.ended.set(hash, why);
    while (this.ended.size > this.rememberLimit) {
      const oldest = this.ended.keys().next();
      if (oldest.done === true) break;
      this.ended.delete(oldest.value);
    }
  }
}

/** The profile a credential is issued with; anything but core or full is refused. */
export function issuedToolProfile(options: IssueOptions): ToolProfile {
  const profile = options.toolProfile ?? ToolProfile.full;
  if (!TOOL_PROFILES.includes(profile)) throw new McpCredentialError("invalid_scope", "credential toolProfile must be core or full");
  return profile;
}

function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
