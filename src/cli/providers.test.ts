import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AgentArchiveServer, serveAgentArchive } from "../testkit/acpAgentArchive.js";
import { runProviders } from "./providersCommand.js";

/**
 * `loom providers search|prepare|list` on a real state dir, with a local
 * registry whose one agent is a binary archive served over local HTTP.
 */

let archive: AgentArchiveServer;
let dir: string;
let registry: string;

beforeAll(async () => {
  archive = await serveAgentArchive();
});

afterAll(async () => {
  await archive.close();
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-cli-providers-"));
  registry = archive.writeRegistry(join(dir, "registry.json"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<{ code: number; text: string }> {
  let text = "";
  const code = await runProviders([...args, "--state-dir", join(dir, "state"), "--registry", registry], (chunk) => {
    text += chunk;
  });
  return { code, text };
}

describe("loom providers", () => {
  it("search lists the registry's agents with what would be installed, starting nothing", async () => {
    const found = await run("search", "scripted");
    expect(found.code).toBe(0);
    expect(found.text).toMatch(/^AGENT\s+VERSION\s+INSTALLS\s+PREPARED\s+NAME\nscripted-acp\s+2\.0\.0\s+binary\s+-\s+Scripted ACP agent\n$/);
    expect(existsSync(join(dir, "state"))).toBe(false);
    expect((await run("search", "nothing-like-this")).text).toBe("no matching agents\n");
  });

  it("prepare installs into the cache, adds the instance to the config (keeping the default one), and proves readiness", async () => {
    const prepared = await run("prepare", "scripted-acp", "--json");
    expect(prepared.code).toBe(0);
    const result = JSON.parse(prepared.text);
    expect(result).toMatchObject({ instanceId: "scripted-acp", installed: { agentId: "scripted-acp", version: "2.0.0", sha256: archive.sha256 }, readiness: { installed: true, authenticated: true, reason: null } });
    const config = JSON.parse(readFileSync(join(dir, "state", "config.json"), "utf8"));
    // The file had no providers: the built-in scripted instance it ran is kept.
    expect(config.providers).toEqual([
      { id: "scripted", driver: "scripted" },
      { id: "scripted-acp", driver: "acp", options: { registryAgent: "scripted-acp" } },
    ]);
  });

  it("prepare --id names the instance; list shows instances and prepared agents", async () => {
    const prepared = await run("prepare", "scripted-acp", "--id", "my-agent");
    expect(prepared.text).toContain("prepared scripted-acp 2.0.0 (binary)");
    expect(prepared.text).toContain('provider instance "my-agent" (driver acp)');
    expect(prepared.text).toContain("ready (a disposable session/new succeeded)");
    const config = JSON.parse(readFileSync(join(dir, "state", "config.json"), "utf8"));
    expect(config.providers).toEqual([
      { id: "scripted", driver: "scripted" },
      { id: "my-agent", driver: "acp", options: { registryAgent: "scripted-acp" } },
    ]);
    const listed = await run("list");
    expect(listed.text).toMatch(/my-agent\s+acp\s+registry:scripted-acp/);
    expect(listed.text).toMatch(/scripted-acp\s+2\.0\.0\s+binary\s+\/.*bin\/scripted-agent/);
  });

  it("an existing instance of another driver is refused before anything is installed; a bad agent id is a usage error", async () => {
    writeFileSync(join(dir, "config.json"), JSON.stringify({ providers: [{ id: "scripted-acp", driver: "scripted" }] }));
    await expect(runProviders(["prepare", "scripted-acp", "--state-dir", join(dir, "state"), "--config", join(dir, "config.json"), "--registry", registry], () => undefined)).rejects.toMatchObject({
      name: "UsageError",
      message: expect.stringContaining('already exists with driver "scripted"'),
    });
    expect(existsSync(join(dir, "state", "acp-agents"))).toBe(false);
    await expect(run("prepare", "Not_An_Id")).rejects.toMatchObject({ name: "UsageError" });
    await expect(run("bogus")).rejects.toMatchObject({ name: "UsageError" });
  });
});
