import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../config/config.js";
import { openServerLog, redact } from "./serverLog.js";
import { startLoomServer } from "./loomServer.js";

/**
 * The server's log file (<state-dir>/logs/loom.log): levels, size rotation,
 * redaction of tokens, and a refused start leaves the file written and closed.
 */
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-log-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openFilesUnder(dir: string): string[] {
  return readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((target) => target.startsWith(dir));
}

describe("server log file", () => {
  it("writes entries at or above its level, with time and level", async () => {
    const root = tempDir();
    const log = openServerLog(root, { level: "info", maxFileBytes: 1024 * 1024, maxFiles: 2 });
    log.write("debug", "not written");
    log.write("info", "sessions: opened one");
    log.configure({ level: "debug", maxFileBytes: 1024 * 1024, maxFiles: 2 });
    log.write("debug", "sessions: holding 1");
    log.write("error", "something broke");
    await log.close();
    const lines = readFileSync(join(root, "logs", "loom.log"), "utf8").trimEnd().split("\n");
    expect(lines.map((l) => l.replace(/^\S+ /, ""))).toEqual(["INFO sessions: opened one", "DEBUG sessions: holding 1", "ERROR something broke"]);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO /);
  });

  it("rotates by size and keeps at most maxFiles rotated files", async () => {
    const root = tempDir();
    const log = openServerLog(root, { level: "info", maxFileBytes: 1024, maxFiles: 2 });
    const line = "x".repeat(200);
    for (let i = 0; i < 40; i += 1) {
      log.write("info", `${i} ${line}`);
      // Rotation happens between writes: give the stream a turn to notice the size.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await log.close();
    const files = readdirSync(join(root, "logs")).sort();
    expect(files[0]).toBe("loom.log");
    expect(files.length).toBeGreaterThan(1);
    expect(files.filter((f) => f !== "loom.log" && !f.endsWith(".txt")).length).toBeLessThanOrEqual(2);
    expect(readFileSync(join(root, "logs", "loom.log"), "utf8").length).toBeLessThanOrEqual(1024 + 300);
  });

  it("never writes a known secret, a bearer credential or a token-shaped string", async () => {
    const root = tempDir();
    const log = openServerLog(root, { level: "info", maxFileBytes: 1024 * 1024, maxFiles: 2 });
    const ownerToken = "o".repeat(43);
    const agentToken = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde";
    log.addSecret("secret-value-1234");
    log.write("info", `got ${ownerToken} and Bearer abc.def and ${agentToken} and secret-value-1234 in thread:1234-5678`);
    await log.close();
    const text = readFileSync(join(root, "logs", "loom.log"), "utf8");
    expect(text).not.toContain(ownerToken);
    expect(text).not.toContain(agentToken);
    expect(text).not.toContain("abc.def");
    expect(text).not.toContain("secret-value-1234");
    expect(text).toContain("in thread:1234-5678");
    expect(redact("Bearer xyz")).toBe("Bearer [redacted]");
  });

  it("a refused start writes why to the log and closes it", async () => {
    const root = tempDir();
    const configPath = join(root, "config.json");
    writeFileSync(configPath, JSON.stringify({ sessions: { idleMs: -1 } }));
    await expect(startLoomServer({ stateDir: join(root, "state"), configPath, cwd: root })).rejects.toBeInstanceOf(ConfigError);
    const text = readFileSync(join(root, "state", "logs", "loom.log"), "utf8");
    expect(text).toMatch(/ERROR loom: start refused: .*sessions\.idleMs/);
    expect(openFilesUnder(join(root, "state", "logs"))).toEqual([]);
  });
});
