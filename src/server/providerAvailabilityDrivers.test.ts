import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedAgentSetup, scriptedAgentSetup } from "../testkit/acpAgentHarness.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { OPENCODE_CREDENTIAL_VARIABLES } from "../providers/opencode/probe.js";
import { PI_CREDENTIAL_VARIABLES } from "../providers/pi/probe.js";

/**
 * orchestrator_capabilities for the acp, grok, opencode, pi and cursor
 * drivers (codex and claude: providerAvailability.test.ts): each way an
 * instance can be unavailable — its executable is missing, it has no
 * credentials, its registry agent was never prepared, its probe failed — is
 * listed with a reason a model can read, next to an instance that is ready.
 * The ACP instances run the scripted ACP agent (a real process); opencode
 * and pi are the installed packages, asked only for their version.
 */

/** Every variable a probe of these drivers reads a credential from: cleared, so no instance is authenticated by the machine's environment. */
const CREDENTIAL_VARIABLES = [...new Set([...OPENCODE_CREDENTIAL_VARIABLES, ...PI_CREDENTIAL_VARIABLES, "CURSOR_API_KEY"])];
const saved = new Map<string, string | undefined>();
let agent: ScriptedAgentSetup;
let h: LoomHarness;

beforeAll(async () => {
  for (const name of CREDENTIAL_VARIABLES) {
    saved.set(name, process.env[name]);
    delete process.env[name];
  }
  agent = scriptedAgentSetup();
  const scripted = (caps: Record<string, unknown>) => agent.instance({ caps }).options;
  h = await LoomHarness.start({
    config: {
      providers: [
        { id: "scripted", driver: "scripted" },
        { id: "acp-ready", driver: "acp", options: scripted({ http: true }) },
        { id: "acp-missing", driver: "acp", options: { command: "/nonexistent/acp-agent" } },
        { id: "acp-unprepared", driver: "acp", options: { registryAgent: "gemini" } },
        { id: "acp-no-login", driver: "acp", options: scripted({ requireAuth: true }) },
        { id: "acp-broken", driver: "acp", options: { command: process.execPath, args: ["-e", "console.error('agent broke'); process.exit(3)"] } },
        { id: "grok-missing", driver: "grok", options: { command: "/nonexistent/grok" } },
        { id: "opencode-missing", driver: "opencode", options: { binaryPath: "/nonexistent/opencode" } },
        { id: "opencode-no-key", driver: "opencode" },
        { id: "pi-missing", driver: "pi", options: { binaryPath: "/nonexistent/pi" } },
        { id: "pi-no-key", driver: "pi" },
        { id: "cursor-no-key", driver: "cursor" },
      ],
    },
  });
});

afterAll(async () => {
  await h.close();
  agent.close();
  for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
});

interface ProviderRow {
  providerInstanceId: string;
  available: boolean;
  canRunChildTasks: boolean;
  reason: string | null;
}

describe("provider availability of every driver", () => {
  it("lists each unavailable instance with why: not installed, not authenticated, not prepared, probe failed", async () => {
    const caps = await h.owner.ok<{ providers: ProviderRow[] }>("orchestrator_capabilities");
    const byId = new Map(caps.providers.map((row) => [row.providerInstanceId, row]));
    expect(byId.get("acp-ready")).toMatchObject({ available: true, canRunChildTasks: true, reason: null });
    const reasons: Record<string, RegExp> = {
      "acp-missing": /^executable not found: \/nonexistent\/acp-agent: /,
      "acp-unprepared": /registry agent gemini is not prepared: run `loom providers prepare gemini`/,
      "acp-no-login": /^not authenticated: .*[Aa]uthentication required/,
      "acp-broken": /^probe failed: ACP agent did not start: .*agent broke/,
      "grok-missing": /^executable not found: \/nonexistent\/grok: /,
      "opencode-missing": /^executable not found: opencode executable not found at \/nonexistent\/opencode/,
      "opencode-no-key": /^not authenticated: no model credentials: /,
      "pi-missing": /^executable not found: pi executable not found at \/nonexistent\/pi/,
      "pi-no-key": /^not authenticated: no model credentials: /,
      // On a Node older than the SDK's engine the reason also says so (and leads with it).
      "cursor-no-key": /no Cursor credentials: set CURSOR_API_KEY/,
    };
    for (const [id, reason] of Object.entries(reasons)) {
      expect(byId.get(id), id).toMatchObject({ available: false, canRunChildTasks: false });
      expect(byId.get(id)?.reason, id).toMatch(reason);
    }
  });
});
