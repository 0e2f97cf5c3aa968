import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { PiOptions } from "./options.js";

/**
 * What `pi --mode rpc` is started with (pure): its arguments, the
 * models.json of a custom model endpoint, and the environment. The MCP
 * token reaches Loom's extension only through T3_MCP_BEARER_TOKEN, never
 * argv; the extension removes it from Pi's environment once read.
 */

export const MCP_URL_ENV = "T3_MCP_URL";
export const MCP_TOKEN_ENV = "T3_MCP_BEARER_TOKEN";
export const INSTRUCTIONS_ENV = "T3_ORCHESTRATION_INSTRUCTIONS";
export const APPROVAL_ENV = "T3_PI_APPROVAL";
export const READ_ONLY_ENV = "T3_PI_READ_ONLY";

/** The tools Loom's extension asks about first, per runtime mode. */
export function gatedTools(runtimeMode: RuntimeMode): string[] {
  switch (runtimeMode) {
    case "approval-required":
      return ["bash", "edit", "write"];
    case "auto-accept-edits":
      return ["bash"];
    case "full-access":
      return [];
    default: {
      const unexpected: never = runtimeMode;
      throw new Error(`unexpected runtime mode ${String(unexpected)}`);
    }
  }
}

export function rpcArgs(input: { readonly extensionPath: string; readonly model: string | null }): string[] {
  return ["--mode", "rpc", "--no-session", "--offline", "--extension", input.extensionPath, ...(input.model === null ? [] : ["--model", input.model])];
}

/** models.json for the instance's custom endpoint: its models are those of the instance named "<id>/<model>". */
export function modelsJson(options: PiOptions): Record<string, unknown> | null {
  const custom = options.modelProvider;
  if (custom === null) return null;
  const models = options.models.flatMap((model) => (model.startsWith(`${custom.id}/`) ? [{ id: model.slice(custom.id.length + 1) }] : []));
  return {
    providers: {
      [custom.id]: {
        baseUrl: custom.baseUrl,
        api: custom.api,
        // Pi reads a bare name as an environment variable.
        apiKey: custom.envKey ?? "loom",
        ...(custom.api === "openai-completions" ? { compat: { supportsDeveloperRole: false, supportsReasoningEffort: false } } : {}),
        models,
      },
    },
  };
}

export interface PiEnvInput {
  readonly options: PiOptions;
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly agentDir: string;
  readonly mcp: { readonly url: string; readonly token: string } | null;
  readonly instructions: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
}

export function piEnv(input: PiEnvInput): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...input.baseEnv, ...input.options.env };
  for (const name of [MCP_URL_ENV, MCP_TOKEN_ENV, INSTRUCTIONS_ENV, APPROVAL_ENV, READ_ONLY_ENV]) delete env[name];
  return {
    ...env,
    PI_CODING_AGENT_DIR: input.agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    [APPROVAL_ENV]: gatedTools(input.runtimeMode).join(","),
    ...(input.interactionMode === "plan" ? { [READ_ONLY_ENV]: "1" } : {}),
    ...(input.mcp === null ? {} : { [MCP_URL_ENV]: input.mcp.url, [MCP_TOKEN_ENV]: input.mcp.token }),
    ...(input.mcp === null || input.instructions === null ? {} : { [INSTRUCTIONS_ENV]: input.instructions }),
  };
}
