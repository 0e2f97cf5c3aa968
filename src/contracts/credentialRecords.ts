/**
 * Where MCP bearer credentials live (docs/postgres.md "Credentials"): one row
 * per token, keyed by the token's SHA-256 hash — never the raw token. The
 * SQLite backend keeps them in the state directory, the PostgreSQL backend in
 * the shared database, so every node sees an issue, an expiry or a
 * revocation at once.
 */
export const CredentialKind = {
  thread: "thread",
  owner: "owner",
} as const;
export type CredentialKind = (typeof CredentialKind)[keyof typeof CredentialKind];

export const CredentialEnd = {
  expired: "expired",
  revoked: "revoked",
} as const;
export type CredentialEnd = (typeof CredentialEnd)[keyof typeof CredentialEnd];

export interface CredentialRecord {
  /** Hex SHA-256 of the token. */
  readonly tokenHash: string;
  readonly credentialId: string;
  readonly kind: CredentialKind;
  /** The node that issued it: for a thread credential, the node running the agent. */
  readonly nodeId: string;
  readonly threadId: string | null;
  readonly providerSessionId: string | null;
  /** The invocation scope handed to tool handlers (JSON). */
  readonly scope: Readonly<Record<string, unknown>>;
  /** Absolute expiry (epoch ms); null never expires (owner tokens). */
  readonly expiresAt: number | null;
  readonly lastUsedAt: number;
  readonly ended: CredentialEnd | null;
}

/** Which live credentials an `end` applies to. */
export type CredentialSelector =
  | { readonly credentialId: string }
  | { readonly providerSessionId: string }
  | { readonly nodeId: string; readonly kind: CredentialKind }
  | { readonly kind: CredentialKind };

/** The backends' common interface; every method is one statement. */
export interface CredentialStore {
  /** Insert a new credential; for an owner token already stored, make it live again under `nodeId`. */
  insert(record: CredentialRecord): Promise<void>;
  findByHash(tokenHash: string): Promise<CredentialRecord | null>;
  findById(credentialId: string): Promise<CredentialRecord | null>;
  /** Record a use (the idle timer). */
  touch(tokenHash: string, now: number): Promise<void>;
  /** End every live credential the selector matches; returns how many. */
  end(selector: CredentialSelector, why: CredentialEnd, now: number): Promise<number>;
  /** Live thread credentials, for `loom nodes`: provider session ids by node. */
  liveSessions(): Promise<readonly { readonly nodeId: string; readonly threadId: string; readonly providerSessionId: string }[]>;
  close(): Promise<void>;
}
