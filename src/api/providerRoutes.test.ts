import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentArchiveServer, serveAgentArchive } from "../testkit/acpAgentArchive.js";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * The ACP registry catalog over real HTTP against a real server: a local
 * registry whose one agent is a binary archive served over local HTTP.
 * Search starts nothing; prepare installs, writes the server's config file
 * and the running server runs the new instance at once; bad input is a typed
 * 400 and a checksum mismatch the registry's typed failure, with nothing
 * installed or written.
 */

let archive: AgentArchiveServer;
let dir: string;
let registry: string;
let h: LoomHarness;

beforeAll(async () => {
  archive = await serveAgentArchive();
  dir = mkdtempSync(join(tmpdir(), "loom-api-providers-"));
  registry = archive.writeRegistry(join(dir, "registry.json"));
  h = await LoomHarness.start({ acpRegistry: registry });
}, 60_000);

afterAll(async () => {
  await h.close();
  await archive.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: { readonly error?: unknown; readonly agents?: { prepared: string | null }[]; readonly instances?: { id: string }[]; readonly prepared?: unknown; readonly [key: string]: unknown };
}

async function call(method: "GET" | "POST", path: string, body?: unknown, token: string | null = h.ownerToken): Promise<Answer> {
  const res = await fetch(`${h.server.url}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

const cache = () => join(h.server.stateDir.root, "acp-agents");

describe("/api/providers", () => {
  it("needs the owner token", async () => {
    expect((await call("GET", "/api/providers/registry", undefined, null)).status).toBe(401);
    expect((await call("POST", "/api/providers/prepare", { agentId: "scripted-acp" }, "not-the-token")).status).toBe(401);
    expect(existsSync(cache())).toBe(false);
  });

  it("search answers the registry's agents with what this machine would install, starting and installing nothing", async () => {
    const found = await call("GET", "/api/providers/registry?query=scripted");
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ registry, agents: [{ agent: { id: "scripted-acp", version: "2.0.0" }, install: { kind: "binary" }, prepared: null }] });
    expect((await call("GET", "/api/providers/registry?query=nothing-like-this")).body.agents).toEqual([]);
    expect(existsSync(cache())).toBe(false);
  });

  it("bad input is a typed 400 naming the problem, with nothing installed or written", async () => {
    const configBefore = readFileSync(configPath(), "utf8");
    const cases: [unknown, RegExp][] = [
      [{ agentId: "Not_An_Id" }, /"Not_An_Id" is not a registry agent id/],
      [{}, /agentId/],
      [{ agentId: "scripted-acp", extra: 1 }, /extra/],
      [{ agentId: "scripted-acp", instanceId: "bad id!" }, /instanceId/],
      ["not json", /JSON/i],
      // An instance of another driver under that id.
      [{ agentId: "scripted-acp", instanceId: "scripted" }, /provider instance "scripted" already exists with driver "scripted"/],
    ];
    for (const [body, message] of cases) {
      const answer = await call("POST", "/api/providers/prepare", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "invalid_request", retryable: false, message: expect.stringMatching(message) });
    }
    const unknown = await call("POST", "/api/providers/prepare", { agentId: "no-such-agent" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: "invalid_request", details: { reason: "unknown_agent" }, message: expect.stringContaining("no-such-agent") });
    expect((await call("GET", "/api/providers/prepare")).status).toBe(405);
    expect(existsSync(cache())).toBe(false);
    expect(readFileSync(configPath(), "utf8")).toBe(configBefore);
  });

  it("a checksum mismatch is refused with the registry's typed failure; nothing is installed", async () => {
    archive.writeRegistry(registry, { sha256: "0".repeat(64) });
    try {
      const configBefore = readFileSync(configPath(), "utf8");
      const answer = await call("POST", "/api/providers/prepare", { agentId: "scripted-acp" });
      expect(answer.status).toBe(409);
      expect(answer.body.error).toMatchObject({ code: "provider_unavailable", details: { reason: "checksum_mismatch" }, message: expect.stringContaining("SHA-256") });
      expect((await call("GET", "/api/providers")).body.prepared).toEqual([]);
      expect(readFileSync(configPath(), "utf8")).toBe(configBefore);
    } finally {
      archive.writeRegistry(registry);
    }
  });

  it("prepare installs, writes the server's config, proves readiness, and the running server runs the instance at once", async () => {
    const prepared = await call("POST", "/api/providers/prepare", { agentId: "scripted-acp", instanceId: "echo-agent" });
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200);
    expect(prepared.body).toMatchObject({
      instanceId: "echo-agent",
      config: configPath(),
      installed: { agentId: "scripted-acp", version: "2.0.0", distribution: "binary", sha256: archive.sha256 },
      readiness: { installed: true, authenticated: true, reason: null },
      active: true,
    });
    const config = JSON.parse(readFileSync(configPath(), "utf8"));
    expect(config.providers.at(-1)).toEqual({ id: "echo-agent", driver: "acp", options: { registryAgent: "scripted-acp" } });

    const listed = await call("GET", "/api/providers");
    expect(listed.status).toBe(200);
    expect(listed.body.instances?.map((instance) => instance.id)).toEqual(["scripted", "plain", "echo-agent"]);
    expect(listed.body.prepared).toMatchObject([{ agentId: "scripted-acp", version: "2.0.0" }]);
    expect((await call("GET", "/api/providers/registry?query=scripted")).body.agents?.[0]?.prepared).toBe("2.0.0");

    // No restart: orchestrator_capabilities lists it available, and a thread runs on it.
    const capabilities = await h.owner.ok<{ providers: { providerInstanceId: string; available: boolean }[] }>("orchestrator_capabilities", {});
    expect(capabilities.providers.find((provider) => provider.providerInstanceId === "echo-agent")).toMatchObject({ available: true });
    const launched = await h.launch({ message: "hello there", title: "prepared over http", target: { providerInstanceId: "echo-agent" } });
    const run = await h.waitForEnd(launched.runId!, 20_000);
    expect(run.status).toBe("completed");
    expect(h.assistantTexts(launched.threadId).at(-1)).toBe("Echo: hello there");
  });
});

function configPath(): string {
  return join(h.server.stateDir.root, "..", "loom-config.json");
}
