import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_PATH, spawnServe, waitForExit } from "../testkit/loomProcess.js";

let stateDir: string;
beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-"));
});
afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

function loom(args: string[]): { status: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [CLI_PATH, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return { status: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("loom CLI", () => {
  it("prints help and version", () => {
    const help = loom(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("loom serve [--host 127.0.0.1] [--port N] [--state-dir DIR] [--config FILE]");
    const version = loom(["--version"]);
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it("rejects an unknown command and a bad port with a clear message", () => {
    const unknown = loom(["frobnicate"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const badPort = loom(["serve", "--port", "http", "--state-dir", stateDir]);
    expect(badPort.status).toBe(2);
    expect(badPort.stderr).toContain("--port must be an integer");
  });

  it("serves on a free port from $LOOM_STATE_DIR and shuts down cleanly on SIGTERM and SIGINT", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const serve = await spawnServe(["--port", "0"], { ...process.env, LOOM_STATE_DIR: stateDir });
      const info = JSON.parse(readFileSync(join(stateDir, "server.json"), "utf8")) as { url: string; pid: number };
      expect(info.url).toBe(serve.url);
      expect(info.pid).toBe(serve.child.pid);
      const health = (await (await fetch(`${serve.url}/health`)).json()) as { ok: boolean };
      expect(health.ok).toBe(true);
      serve.child.kill(signal);
      const exit = await waitForExit(serve.child);
      expect(exit.code, serve.stderr()).toBe(0);
      expect(existsSync(join(stateDir, "server.json"))).toBe(false);
    }
  });
});
