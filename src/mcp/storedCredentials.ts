import { createHash, randomBytes as nodeRandomBytes } from "node:crypto";
import { CredentialKind, type CredentialRecord, type CredentialStore } from "../contracts/credentialRecords.js";
import {
  type CredentialResolution,
  type CredentialScopeInput,
  DEFAULT_IDLE_TTL_MS,
  DEFAULT_MAX_LIFETIME_MS,
  type IssueOptions,
  type IssuedCredential,
  MCP_CREDENTIAL_CAPABILITIES,
  McpCredentialError,
  type OwnerInvocationScope,
  type ThreadInvocationScope,
  issuedToolProfile,
} from "./credentialRegistry.js";
import { ToolProfile } from "../contracts/tools/discoveryTools.js";

/**
 * What the MCP endpoint needs of a credential book: the in-memory
 * McpCredentialRegistry (tests' harnesses) and StoredCredentialRegistry (the
 * server) both fit.
 */
export interface McpCredentials {
  resolve(token: string): CredentialResolution | Promise<CredentialResolution>;
  isActive(credentialId: string): boolean | Promise<boolean>;
}

export interface StoredCredentialRegistryOptions {
  readonly store: CredentialStore;
  /** The environment the owner token acts in. */
  readonly environmentId: string;
  /** The node issuing credentials (its agent processes hold them). */
  readonly nodeId: string;
  readonly idleTtlMs?: number;
  readonly maxLifetimeMs?: number;
  readonly now?: () => number;
  readonly randomBytes?: (size: number) => Buffer;
}

const TOKEN_BYTES = 32;
const CREDENTIAL_ID_BYTES = 12;

/**
 * Bearer credentials validated from SHA-256 hashes in a CredentialStore
 * (SQLite in the state directory, or the shared PostgreSQL database), so a
 * token issued on one node is accepted on every node, and an expiry or
 * revocation is seen by all of them on their next lookup: nothing is cached.
 * Same semantics as McpCredentialRegistry (absolute lifetime, idle timeout,
 * revoked and expired told apart from unknown); the raw token is returned
 * once by `issue()` and never stored or logged.
 */
export class StoredCredentialRegistry implements McpCredentials {
  private readonly store: CredentialStore;
  private readonly idleTtlMs: number;
  private readonly maxLifetimeMs: number;
  private readonly now: () => number;
  private readonly randomBytes: (size: number) => Buffer;
  /** A use is written back at most this often per token (the idle timer's resolution). */
  private readonly touchEveryMs: number;

  constructor(private readonly options: StoredCredentialRegistryOptions) {
    this.store = options.store;
    this.idleTtlMs = options.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
    this.maxLifetimeMs = options.maxLifetimeMs ?? DEFAULT_MAX_LIFETIME_MS;
    this.now = options.now ?? Date.now;
    this.randomBytes = options.randomBytes ?? nodeRandomBytes;
    this.touchEveryMs = Math.min(1_000, Math.floor(this.idleTtlMs / 10));
  }

  /** Mint a thread credential, stored (as its hash) before the token is returned. */
  async issue(input: CredentialScopeInput, options: IssueOptions = {}): Promise<IssuedCredential> {
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
    const tokenHash = hashToken(token);
    if ((await this.store.findByHash(tokenHash)) !== null || (await this.store.findById(credentialId)) !== null) {
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
    await this.store.insert({
      tokenHash,
      credentialId,
      kind: CredentialKind.thread,
      nodeId: this.options.nodeId,
      threadId: input.threadId,
      providerSessionId: input.providerSessionId,
      scope: { ...scope },
      expiresAt,
      lastUsedAt: now,
      ended: null,
    });
    return { token, credentialId, expiresAt };
  }

  /** Look a bearer token up by its hash. Success refreshes the idle timer. */
  async resolve(token: string): Promise<CredentialResolution> {
    if (typeof token !== "string" || token === "") return { ok: false, reason: "unknown" };
    const record = await this.store.findByHash(hashToken(token));
    if (record === null) return { ok: false, reason: "unknown" };
    if (record.ended !== null) return { ok: false, reason: record.ended };
    if (record.kind === CredentialKind.owner) return { ok: true, scope: this.ownerScope() };
    const now = this.now();
    if (this.isExpired(record, now)) {
      await this.store.end({ credentialId: record.credentialId }, "expired", now);
      return { ok: false, reason: "expired" };
    }
    if (now - record.lastUsedAt >= this.touchEveryMs) await this.store.touch(record.tokenHash, now);
    const scope = record.scope as unknown as Omit<ThreadInvocationScope, "toolProfile"> & { readonly toolProfile?: ToolProfile };
    // A credential stored before tool profiles existed lists every tool.
    return { ok: true, scope: { ...scope, toolProfile: scope.toolProfile ?? ToolProfile.full } };
  }

  /** True while the credential is neither revoked nor expired; does not refresh the idle timer. */
  async isActive(credentialId: string): Promise<boolean> {
    const record = await this.store.findById(credentialId);
    return record !== null && record.ended === null && !this.isExpired(record, this.now());
  }

  /** True when a live credential was revoked. */
  async revoke(credentialId: string): Promise<boolean> {
    return (await this.store.end({ credentialId }, "revoked", this.now())) > 0;
  }

  /** Revoke every credential of a released provider session; returns how many. */
  revokeSession(providerSessionId: string): Promise<number> {
    return this.store.end({ providerSessionId }, "revoked", this.now());
  }

  /** Revoke every thread credential a node issued (its agents are gone); returns how many. */
  revokeNode(nodeId: string): Promise<number> {
    return this.store.end({ nodeId, kind: CredentialKind.thread }, "revoked", this.now());
  }

  /** Revoke every thread credential (a single node's boot: its previous agents are gone). */
  revokeAllThreadCredentials(): Promise<number> {
    return this.store.end({ kind: CredentialKind.thread }, "revoked", this.now());
  }

  /** Accept an owner token (no expiry) on every node sharing the store. */
  async registerOwnerToken(token: string): Promise<void> {
    if (typeof token !== "string" || token.length < 16) {
      throw new McpCredentialError("invalid_owner_token", "owner token must be a string of at least 16 characters");
    }
    const tokenHash = hashToken(token);
    await this.store.insert({
      tokenHash,
      credentialId: `owner:${tokenHash.slice(0, 24)}`,
      kind: CredentialKind.owner,
      nodeId: this.options.nodeId,
      threadId: null,
      providerSessionId: null,
      scope: { kind: "owner" },
      expiresAt: null,
      lastUsedAt: this.now(),
      ended: null,
    });
  }

  /** Revoke an owner token on every node. */
  async revokeOwnerToken(token: string): Promise<boolean> {
    return (await this.store.end({ credentialId: `owner:${hashToken(token).slice(0, 24)}` }, "revoked", this.now())) > 0;
  }

  /** Live thread credentials by node, for `loom nodes`. */
  liveSessions(): ReturnType<CredentialStore["liveSessions"]> {
    return this.store.liveSessions();
  }

  private ownerScope(): OwnerInvocationScope {
    return { kind: "owner", environmentId: this.options.environmentId, threadId: null, capabilities: MCP_CREDENTIAL_CAPABILITIES, toolProfile: ToolProfile.full };
  }

  private isExpired(record: CredentialRecord, now: number): boolean {
    return (record.expiresAt !== null && now >= record.expiresAt) || now - record.lastUsedAt >= this.idleTtlMs;
  }
}

/** Hex SHA-256 of a token: the only form a credential is stored in. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
