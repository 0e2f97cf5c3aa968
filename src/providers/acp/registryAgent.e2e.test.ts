import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import type { AcpAgentHarness } from "../../testkit/acpRealAgents.js";
import { acpAgentInstance } from "../../testkit/acpRealAgents.js";
import { TURN_MS, agentAnswersAsDelegatedChild, agentDelegatesToScriptedChild } from "../../testkit/acpAgentScenarios.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { acpCacheRoot } from "./registryCache.js";

/**
 * A real ACP agent that Loom installs itself from an ACP registry: a
 * registry document (written here, beside the test) lists Codex ACP 0.16.0
 * as an npx distribution whose arguments and environment point it at the
 * scripted model server. `POST /api/providers/prepare` installs the package
 * with `npm install --prefix` into the state dir's versioned cache, writes
 * the instance into the config and proves readiness with a disposable
 * session/new; the running server then drives the agent from the cache
 * through the same scenarios as the other real ACP agents, judged from
 * Loom's state. npm fetches the package as `npm ci` does (its cache holds
 * it after the project's own install).
 */

const PACKAGE = "@zed-industries/codex-acp@0.16.0";
const INSTALL_MS = 240_000;

let model: ModelServer;
let work: string;
let loom: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  work = mkdtempSync(join(tmpdir(), "loom-registry-agent-"));
  // The launch settings of the directly configured codex-acp instance, moved into the registry's declaration.
  const direct = acpAgentInstance("codex-acp", model.url, join(work, "codex-home"));
  const options = direct.options as { args: string[]; env: Record<string, string> };
  const registry = join(work, "registry.json");
  writeFileSync(
    registry,
    JSON.stringify({
      version: "1.0.0",
      agents: [{ id: "codex-acp", name: "Codex ACP", version: "0.16.0", description: "Codex as an ACP agent", distribution: { npx: { package: PACKAGE, args: options.args, env: options.env } } }],
    }),
  );
  loom = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted" }] }, acpRegistry: registry });
});

afterEach(async () => {
  await loom.close();
  await model.close();
  rmSync(work, { recursive: true, force: true });
});

async function prepare(): Promise<Record<string, unknown>> {
  const response = await fetch(`${loom.server.url}/api/providers/prepare`, {
    method: "POST",
    headers: { authorization: `Bearer ${loom.ownerToken}`, "content-type": "application/json" },
    body: JSON.stringify({ agentId: "codex-acp" }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

describe("a registry agent prepared by Loom, end to end", () => {
  it(
    "prepare installs Codex ACP from npm into the versioned cache and proves it ready; it delegates through Loom and answers a delegated task",
    async () => {
      const prepared = await prepare();
      const versionDir = join(acpCacheRoot(loom.server.stateDir.root), "codex-acp", "0.16.0");
      expect(prepared).toMatchObject({
        instanceId: "codex-acp",
        installed: { agentId: "codex-acp", version: "0.16.0", distribution: "npx", source: `npm:${PACKAGE}`, command: join(versionDir, "node_modules", ".bin", "codex-acp") },
        readiness: { installed: true, authenticated: true, reason: null },
        active: true,
      });
      // Installed under the cache, not globally: the package is in the version's own node_modules.
      expect(JSON.parse(readFileSync(join(versionDir, "node_modules", "@zed-industries", "codex-acp", "package.json"), "utf8"))).toMatchObject({ version: "0.16.0" });
      expect(existsSync(join(versionDir, "loom-install.json"))).toBe(true);

      const h: AcpAgentHarness = { model, loom, close: () => Promise.resolve() };
      await agentDelegatesToScriptedChild(h, "codex-acp");
      await agentAnswersAsDelegatedChild(h, "codex-acp");
    },
    INSTALL_MS + TURN_MS * 6,
  );
});
