import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { pollUntil } from "../testkit/poll.js";

/** `loom doctor` and the provider lines `loom serve` prints on start, against real state dirs and a real server. */
function loom(...args: string[]): Promise<Ran> {
  return runLoom(args);
}

const dirs: string[] = [];
function stateDir(config: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-doctor-"));
  dirs.push(dir);
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const providers = [
  { id: "scripted", driver: "scripted" },
  { id: "gone", driver: "codex", options: { binaryPath: "/nonexistent/codex" } },
  { id: "gem", driver: "acp", options: { registryAgent: "gemini" } },
];

describe("loom doctor", () => {
  it("reports each provider's availability with a fix, the running server, and loose token permissions; serve prints the same provider lines", { timeout: 120_000 }, async () => {
    const dir = stateDir({ providers });
    const serve = await spawnServe(["--state-dir", dir, "--port", "0"], cliEnv());
    try {
      await pollUntil(() => serve.stderr(), (text) => text.includes("loom: provider gone (codex)"), "serve's provider lines", 30_000);
      expect(serve.stderr()).toMatch(/^loom: provider scripted \(scripted\): available, models scripted-1$/m);
      expect(serve.stderr()).toMatch(/^loom: provider gone \(codex\): unavailable: executable not found: .+$/m);

      const healthy = await loom("doctor", "--state-dir", dir);
      expect(healthy.status, healthy.stdout).toBe(0);
      expect(healthy.stdout).toMatch(/^ok {4}sqlite: SQLite 3\.\d+\.\d+ \(better-sqlite3\)$/m);
      expect(healthy.stdout).toMatch(/^warn {2}provider gone: provider gone \(codex\): unavailable: executable not found: .+\n {6}fix: install the agent CLI or set its executable path in the instance's options$/m);
      expect(healthy.stdout).toMatch(/^warn {2}provider gem: provider gem \(acp\): unavailable: executable not found: registry agent gemini is not prepared: .+\n {6}fix: run loom providers prepare gemini$/m);
      expect(healthy.stdout).toContain(`ok    server: running (pid ${serve.child.pid}) and answering on ${serve.url}\n`);

      chmodSync(join(dir, "owner-token"), 0o644);
      const loose = await loom("doctor", "--state-dir", dir, "--json");
      expect(loose.status).toBe(1);
      const report = JSON.parse(loose.stdout) as { ok: boolean; checks: { name: string; verdict: string; fix: string | null }[] };
      expect(report.ok).toBe(false);
      expect(report.checks.find((c) => c.name === "owner token")).toMatchObject({ verdict: "fail", fix: `chmod 600 ${join(dir, "owner-token")}` });
    } finally {
      serve.child.kill("SIGTERM");
      await waitForExit(serve.child);
    }
    const stopped = await loom("doctor", "--state-dir", dir);
    expect(stopped.stdout).toContain("ok    server: no server running for this state dir (start one with loom serve)\n");
  });

  it("fails on a config loom serve would refuse, naming every problem", async () => {
    const dir = stateDir({ providers: [{ id: "x", driver: "nope" }, { id: "s", driver: "scripted", options: { turnDelay: 5 } }] });
    const ran = await loom("doctor", "--state-dir", dir);
    expect(ran.status).toBe(1);
    expect(ran.stdout).toMatch(/^FAIL {2}config: providers\.x: unknown driver "nope"; known drivers: .*scripted$/m);
    expect(ran.stdout).toMatch(/^FAIL {2}config: providers\.s: .*turnDelay/m);
  });
});
