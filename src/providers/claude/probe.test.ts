import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { parseClaudeOptions } from "./options.js";
import type { ProbeEnvironment } from "./probe.js";
import { bundledExecutable, probeClaude } from "./probe.js";

function instance(options: Record<string, unknown> = {}, models: string[] | null = null): ProviderInstanceConfig {
  return { id: "claude", driver: "claude", enabled: true, displayName: null, models, options };
}

function probeEnv(overrides: Partial<ProbeEnvironment> = {}, files: readonly string[] = []): ProbeEnvironment {
  const present = new Set(files);
  return {
    processEnv: {},
    resolve: (specifier) => {
      if (specifier === "@anthropic-ai/claude-agent-sdk") return "/app/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs";
      if (specifier === "@anthropic-ai/claude-agent-sdk-linux-x64/claude") return "/app/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude";
      throw new Error(`cannot resolve ${specifier}`);
    },
    exists: (path) => present.has(path),
    platform: "linux",
    arch: "x64",
    musl: false,
    ...overrides,
  };
}

const BINARY = "/app/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude";

describe("claude probe", () => {
  it("installed with the bundled binary, authenticated by an API key in the instance env", () => {
    expect(probeClaude(parseClaudeOptions(instance({ env: { ANTHROPIC_API_KEY: "dummy" } })), probeEnv({}, [BINARY]))).toEqual({ installed: true, authenticated: true, reason: null });
  });

  it("authenticated by Loom's environment or by a config dir with a login", () => {
    expect(probeClaude(parseClaudeOptions(instance()), probeEnv({ processEnv: { ANTHROPIC_API_KEY: "k" } }, [BINARY])).authenticated).toBe(true);
    expect(probeClaude(parseClaudeOptions(instance({ configDir: "/cfg" })), probeEnv({}, [BINARY, "/cfg/.credentials.json"])).authenticated).toBe(true);
    expect(probeClaude(parseClaudeOptions(instance({ configDir: "/cfg" })), probeEnv({}, [BINARY])).authenticated).toBe(false);
  });

  it("says why in words a model can read", () => {
    const probe = probeClaude(parseClaudeOptions(instance()), probeEnv({}, [BINARY]));
    expect(probe).toMatchObject({ installed: true, authenticated: false });
    expect(probe.reason).toContain("no Anthropic credentials");
    expect(probe.reason).toContain("ANTHROPIC_API_KEY");
  });

  it("not installed: no SDK, no binary for the platform, or a missing executablePath", () => {
    const noSdk = probeEnv({ resolve: () => { throw new Error("nope"); } });
    expect(probeClaude(parseClaudeOptions(instance({ env: { ANTHROPIC_API_KEY: "k" } })), noSdk)).toMatchObject({ installed: false, reason: expect.stringContaining("not installed") });
    expect(probeClaude(parseClaudeOptions(instance({ env: { ANTHROPIC_API_KEY: "k" } })), probeEnv({ arch: "riscv64" }, [BINARY]))).toMatchObject({
      installed: false,
      reason: expect.stringContaining("linux-riscv64"),
    });
    const custom = parseClaudeOptions(instance({ executablePath: "/opt/claude", env: { ANTHROPIC_API_KEY: "k" } }));
    expect(probeClaude(custom, probeEnv({}, [BINARY])).reason).toContain("/opt/claude");
    expect(probeClaude(custom, probeEnv({}, ["/opt/claude"])).installed).toBe(true);
  });

  it("finds the bundled binary the way the SDK does (glibc first, musl as fallback)", () => {
    expect(bundledExecutable(probeEnv({}, [BINARY]), "/sdk.mjs")).toBe(BINARY);
    expect(bundledExecutable(probeEnv({ musl: true }, [BINARY]), "/sdk.mjs")).toBe(BINARY);
    expect(bundledExecutable(probeEnv({}, []), "/sdk.mjs")).toBeNull();
  });

  it("the real probe finds the installed SDK and its binary", () => {
    expect(probeClaude(parseClaudeOptions(instance({ env: { ANTHROPIC_API_KEY: "k" } })))).toEqual({ installed: true, authenticated: true, reason: null });
  });
});
