import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import type { CredentialScopeInput } from "./credentialRegistry.js";
import { McpCredentialError, McpCredentialRegistry } from "./credentialRegistry.js";

const scope: CredentialScopeInput = {
  environmentId: "env-1",
  threadId: "thread:1",
  providerInstanceId: "codex",
  providerSessionId: "provider-session:1",
};

/** A deterministic random source: every call returns fresh, distinct bytes. */
function counterBytes(): (size: number) => Buffer {
  let counter = 0;
  return (size) => {
    counter += 1;
    const buffer = Buffer.alloc(size, counter % 256);
    buffer.writeUInt32BE(counter, 0);
    return buffer;
  };
}

function setup(options: { idleTtlMs?: number; maxLifetimeMs?: number; rememberLimit?: number } = {}) {
  const clock = { now: 1_000_000 };
  const registry = new McpCredentialRegistry({
    environmentId: "env-1",
    now: () => clock.now,
    randomBytes: counterBytes(),
    ...options,
  });
  return { clock, registry };
}

describe("McpCredentialRegistry issue and resolve", () => {
  it("issues a 32-byte base64url token that resolves to its thread scope", () => {
    const { registry, clock } = setup({ maxLifetimeMs: 10_000 });
    const issued = registry.issue(scope);
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(issued.token, "base64url")).toHaveLength(32);
    expect(issued.expiresAt).toBe(clock.now + 10_000);
    expect(registry.resolve(issued.token)).toEqual({
      ok: true,
      scope: { kind: "thread", credentialId: issued.credentialId, ...scope, capabilities: ["preview", "orchestration"], toolProfile: "full" },
    });
  });

  it("uses real randomness by default", () => {
    const registry = new McpCredentialRegistry({ environmentId: "env-1" });
    const a = registry.issue(scope);
    const b = registry.issue(scope);
    expect(a.token).not.toBe(b.token);
    expect(a.credentialId).not.toBe(b.credentialId);
  });

  it("an unknown or empty token is unknown", () => {
    const { registry } = setup();
    registry.issue(scope);
    expect(registry.resolve("not-a-token")).toEqual({ ok: false, reason: "unknown" });
    expect(registry.resolve("")).toEqual({ ok: false, reason: "unknown" });
  });

  it("rejects a scope with an empty field", () => {
    const { registry } = setup();
    expect(() => registry.issue({ ...scope, providerSessionId: "" })).toThrow(McpCredentialError);
  });

  it("keeps no raw token in its internals", () => {
    const { registry } = setup();
    const issued = registry.issue(scope);
    registry.registerOwnerToken("owner-token-0123456789abcdef");
    const dump = inspect(registry, { depth: Infinity, showHidden: true });
    expect(dump).toContain(issued.credentialId);
    expect(dump).not.toContain(issued.token);
    expect(dump).not.toContain("owner-token-0123456789abcdef");
    expect(JSON.stringify(registry)).not.toContain(issued.token);
  });
});

describe("McpCredentialRegistry expiry", () => {
  it("expires after the idle TTL, and each resolve refreshes it", () => {
    const { registry, clock } = setup({ idleTtlMs: 1_000 });
    const { token } = registry.issue(scope);
    clock.now += 999;
    expect(registry.resolve(token).ok).toBe(true);
    clock.now += 999;
    expect(registry.resolve(token).ok).toBe(true);
    clock.now += 1_000;
    expect(registry.resolve(token)).toEqual({ ok: false, reason: "expired" });
    expect(registry.resolve(token)).toEqual({ ok: false, reason: "expired" });
  });

  it("expires at the absolute lifetime even when kept busy", () => {
    const { registry, clock } = setup({ idleTtlMs: 1_000, maxLifetimeMs: 2_500 });
    const { token } = registry.issue(scope);
    for (let i = 0; i < 2; i++) {
      clock.now += 900;
      expect(registry.resolve(token).ok).toBe(true);
    }
    clock.now += 700;
    expect(registry.resolve(token)).toEqual({ ok: false, reason: "expired" });
  });

  it("sweep drops expired credentials and keeps live ones", () => {
    const { registry, clock } = setup({ idleTtlMs: 1_000 });
    const stale = registry.issue(scope);
    clock.now += 600;
    const fresh = registry.issue({ ...scope, providerSessionId: "provider-session:2" });
    clock.now += 500;
    expect(registry.sweep()).toBe(1);
    expect(registry.size).toBe(1);
    expect(registry.resolve(stale.token)).toEqual({ ok: false, reason: "expired" });
    expect(registry.resolve(fresh.token).ok).toBe(true);
  });
});

describe("McpCredentialRegistry revocation", () => {
  it("revoke ends one credential and remembers it as revoked", () => {
    const { registry } = setup();
    const a = registry.issue(scope);
    const b = registry.issue(scope);
    expect(registry.revoke(a.credentialId)).toBe(true);
    expect(registry.revoke(a.credentialId)).toBe(false);
    expect(registry.resolve(a.token)).toEqual({ ok: false, reason: "revoked" });
    expect(registry.resolve(b.token).ok).toBe(true);
  });

  it("revokeSession ends every credential of that provider session only", () => {
    const { registry } = setup();
    const a = registry.issue(scope);
    const b = registry.issue(scope);
    const other = registry.issue({ ...scope, providerSessionId: "provider-session:2" });
    expect(registry.revokeSession(scope.providerSessionId)).toBe(2);
    expect(registry.resolve(a.token)).toEqual({ ok: false, reason: "revoked" });
    expect(registry.resolve(b.token)).toEqual({ ok: false, reason: "revoked" });
    expect(registry.resolve(other.token).ok).toBe(true);
    expect(registry.revokeSession(scope.providerSessionId)).toBe(0);
  });

  it("remembers a bounded number of ended tokens, oldest forgotten first", () => {
    const { registry } = setup({ rememberLimit: 2 });
    const issued = [registry.issue(scope), registry.issue(scope), registry.issue(scope)];
    for (const credential of issued) registry.revoke(credential.credentialId);
    expect(issued.map((c) => registry.resolve(c.token))).toEqual([
      { ok: false, reason: "unknown" },
      { ok: false, reason: "revoked" },
      { ok: false, reason: "revoked" },
    ]);
  });
});

describe("McpCredentialRegistry owner token", () => {
  const ownerToken = "owner-token-0123456789abcdef";

  it("resolves to the owner scope and never expires", () => {
    const { registry, clock } = setup({ idleTtlMs: 1_000, maxLifetimeMs: 2_000 });
    expect(registry.resolve(ownerToken)).toEqual({ ok: false, reason: "unknown" });
    registry.registerOwnerToken(ownerToken);
    clock.now += 10_000_000;
    registry.sweep();
    expect(registry.resolve(ownerToken)).toEqual({
      ok: true,
      scope: { kind: "owner", environmentId: "env-1", threadId: null, capabilities: ["preview", "orchestration"], toolProfile: "full" },
    });
  });

  it("a replaced owner token resolves as revoked", () => {
    const { registry } = setup();
    registry.registerOwnerToken(ownerToken);
    registry.registerOwnerToken("second-owner-token-0123456789");
    expect(registry.resolve(ownerToken)).toEqual({ ok: false, reason: "revoked" });
    expect(registry.resolve("second-owner-token-0123456789").ok).toBe(true);
  });

  it("refuses a short owner token", () => {
    const { registry } = setup();
    expect(() => registry.registerOwnerToken("short")).toThrow(/at least 16 characters/);
  });
});

describe("McpCredentialRegistry isActive and narrowed capabilities", () => {
  it("isActive follows revocation and expiry without refreshing the idle timer", () => {
    const { registry, clock } = setup({ idleTtlMs: 1_000 });
    const a = registry.issue(scope);
    const b = registry.issue({ ...scope, providerSessionId: "provider-session:2" });
    expect(registry.isActive(a.credentialId)).toBe(true);
    clock.now += 600;
    expect(registry.isActive(a.credentialId)).toBe(true);
    expect(registry.resolve(b.token).ok).toBe(true);
    clock.now += 600;
    // a: 1,200 ms idle, the isActive check at 600 ms did not count as use; b was used at 600 ms.
    expect(registry.isActive(a.credentialId)).toBe(false);
    expect(registry.isActive(b.credentialId)).toBe(true);
    expect(registry.resolve(a.token)).toEqual({ ok: false, reason: "expired" });
    expect(registry.isActive("mcp-credential:nope")).toBe(false);
  });

  it("a revoked credential is not active", () => {
    const { registry } = setup();
    const issued = registry.issue(scope);
    registry.revokeSession(scope.providerSessionId);
    expect(registry.isActive(issued.credentialId)).toBe(false);
  });

  it("issues a preview-only credential and refuses unknown capabilities", () => {
    const { registry } = setup();
    const issued = registry.issue(scope, { capabilities: ["preview", "preview"] });
    const resolved = registry.resolve(issued.token);
    expect(resolved.ok && resolved.scope.capabilities).toEqual(["preview"]);
    expect(() => registry.issue(scope, { capabilities: ["admin" as never] })).toThrow(McpCredentialError);
  });

  it("carries the tool profile it was issued with (default full) and refuses an unknown one", () => {
    const { registry } = setup();
    const core = registry.resolve(registry.issue(scope, { toolProfile: "core" }).token);
    expect(core.ok && core.scope.toolProfile).toBe("core");
    const plain = registry.resolve(registry.issue(scope).token);
    expect(plain.ok && plain.scope.toolProfile).toBe("full");
    expect(() => registry.issue(scope, { toolProfile: "tiny" as never })).toThrow(McpCredentialError);
  });
});
