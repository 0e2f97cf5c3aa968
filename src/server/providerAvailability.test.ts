import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * orchestrator_capabilities is derived from the same registry dispatch uses:
 * a codex or claude instance whose executable is missing, or that has no
 * credentials, is listed as unavailable with a reason a model can read, and
 * work aimed at it is refused with provider_unavailable. (An instance of a
 * driver this build does not have never gets this far: `loom serve` refuses
 * the config at start, see loomServer.test.ts.)
 */
const CREDENTIAL_VARIABLES = ["OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"];
const saved = new Map<string, string | undefined>();
let h: LoomHarness;

beforeAll(async () => {
  for (const name of CREDENTIAL_VARIABLES) {
    saved.set(name, process.env[name]);
    delete process.env[name];
  }
  h = await LoomHarness.start({
    config: {
      providers: [
        { id: "scripted", driver: "scripted" },
        { id: "codex-missing", driver: "codex", options: { binaryPath: "/nonexistent/codex" } },
        { id: "codex-no-key", driver: "codex" },
        { id: "claude-missing", driver: "claude", options: { executablePath: "/nonexistent/claude", env: { ANTHROPIC_API_KEY: "k" } } },
        { id: "claude-no-key", driver: "claude" },
        { id: "off", driver: "scripted", enabled: false },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
  for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
});

interface ProviderRow {
  providerInstanceId: string;
  available: boolean;
  canRunChildTasks: boolean;
  reason: string | null;
}

describe("provider availability", () => {
  it("reports each unavailable instance with its reason", async () => {
    const caps = await h.owner.ok<{ providers: ProviderRow[] }>("orchestrator_capabilities");
    const byId = new Map(caps.providers.map((p) => [p.providerInstanceId, p]));
    expect(byId.get("scripted")).toMatchObject({ available: true, canRunChildTasks: true, reason: null });
    for (const id of ["codex-missing", "codex-no-key", "claude-missing", "claude-no-key", "off"]) {
      expect(byId.get(id), id).toMatchObject({ available: false, canRunChildTasks: false });
      expect(byId.get(id)?.reason, id).toEqual(expect.any(String));
    }
    expect(byId.get("codex-missing")?.reason).toContain("/nonexistent/codex");
    expect(byId.get("codex-no-key")?.reason).toMatch(/OPENAI_API_KEY/);
    expect(byId.get("claude-missing")?.reason).toContain("/nonexistent/claude");
    expect(byId.get("claude-no-key")?.reason).toMatch(/ANTHROPIC_API_KEY/);
    expect(byId.get("off")?.reason).toBe("disabled in config");
  });

  it("refuses work aimed at an unavailable instance and writes nothing", async () => {
    const before = h.server.orchestrator.state.lastSequence;
    const outcome = await h.owner.call("t3_thread_launch", { message: "hi", target: { providerInstanceId: "codex-no-key" } });
    expect(outcome.errorCode).toBe("provider_unavailable");
    expect(h.server.orchestrator.state.lastSequence).toBe(before);
  });
});
