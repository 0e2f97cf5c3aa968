import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GuestShareKey, freshShareId } from "./shareKey.js";

const keyPath = () => join(mkdtempSync(join(tmpdir(), "loom-guest-key-")), "guest-share.key");

describe("GuestShareKey", () => {
  it("makes the key once (0600) and every instance on the file accepts the others' links", () => {
    const path = keyPath();
    const shareId = freshShareId();
    const token = new GuestShareKey(path).token(shareId);
    expect(token).toMatch(/^[\w-]{22}\.[\w-]{22}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const before = readFileSync(path, "utf8");
    expect(new GuestShareKey(path).shareIdOf(token)).toBe(shareId);
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  it("refuses a link signed with another key, an altered mac or share id, and a mac of the wrong length", () => {
    const key = new GuestShareKey(keyPath());
    const shareId = freshShareId();
    const token = key.token(shareId);
    const [id, mac] = token.split(".") as [string, string];
    expect(new GuestShareKey(keyPath()).shareIdOf(token)).toBeNull();
    expect(key.shareIdOf(`${id}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`)).toBeNull();
    expect(key.shareIdOf(`${freshShareId()}.${mac}`)).toBeNull();
    expect(key.shareIdOf(`${id}.${mac}AA`)).toBeNull();
    expect(key.shareIdOf(`${id}.${mac.slice(0, 21)}`)).toBeNull();
    expect(key.shareIdOf(id)).toBeNull();
  });

  it("refuses to sign with a key file that is not 32 bytes", () => {
    const path = keyPath();
    writeFileSync(path, "short", { mode: 0o600 });
    expect(() => new GuestShareKey(path).token(freshShareId())).toThrow(/not 32 bytes/);
  });
});
