import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";

/** Bytes of the link's HMAC: 128 bits, truncated from HMAC-SHA-256 (spec 004 §3.4). */
const LINK_MAC_BYTES = 16;
const KEY_BYTES = 32;

/**
 * The server's guest share key, in the state dir (`guest-share.key`, mode
 * 0600), made once and never written to the event log. A link is
 * `<shareId>.<mac>` where mac is the base64url of HMAC-SHA-256(key, shareId)
 * cut to 128 bits; without the key no one can make a link for a share id.
 * Every node on one state dir reads the same file, so each accepts the links
 * the others hand out.
 */
export class GuestShareKey {
  private key: Buffer | null = null;

  constructor(private readonly path: string) {}

  /** The link token of a share: `<shareId>.<mac>`. */
  token(shareId: string): string {
    return `${shareId}.${this.mac(shareId).toString("base64url")}`;
  }

  /** The share id a token names when its mac is this server's, else null (compared in constant time). */
  shareIdOf(token: string): string | null {
    const dot = token.lastIndexOf(".");
    if (dot <= 0) return null;
    const shareId = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), "base64url");
    if (given.length !== LINK_MAC_BYTES || token.slice(dot + 1) !== given.toString("base64url")) return null;
    return timingSafeEqual(given, this.mac(shareId)) ? shareId : null;
  }

  private mac(shareId: string): Buffer {
    return createHmac("sha256", this.bytes()).update(shareId, "utf8").digest().subarray(0, LINK_MAC_BYTES);
  }

  private bytes(): Buffer {
    if (this.key !== null) return this.key;
    this.key = readOrCreateKey(this.path);
    return this.key;
  }
}

/** A fresh random share id: 128 bits, base64url (no `.`, so the token splits at its last dot). */
export function freshShareId(): string {
  return randomBytes(16).toString("base64url");
}

function readOrCreateKey(path: string): Buffer {
  // Written whole beside it, then linked into place: the first node wins, one that loses the race reads the winner's key.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, randomBytes(KEY_BYTES).toString("base64url"), { mode: 0o600 });
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  chmodSync(path, 0o600);
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64url");
  if (key.length !== KEY_BYTES) throw new Error(`the guest share key at ${path} is not ${KEY_BYTES} bytes; remove it to make a new one (every open link then stops working)`);
  return key;
}
