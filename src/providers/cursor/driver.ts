import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { optionsForSession } from "../kit/driverOptions.js";
import { agentOptions, sendOptions } from "./agentOptions.js";
import type { CursorOptions } from "./options.js";
import { CURSOR_DRIVER, CursorOptionsSchema, DEFAULT_CURSOR_MODELS, cursorCapabilities, cursorOptions } from "./options.js";
import { apiKeyOf, probeCursor } from "./probe.js";
import type { CursorSdk } from "./session.js";
import { CursorSession } from "./session.js";

/**
 * The `cursor` driver: Cursor's agent through @cursor/sdk's local agent API
 * (docs/providers/cursor.md). Each Loom provider session is one local agent
 * in the thread's working directory (a later session of the thread resumes
 * it); Loom's MCP endpoint is the http MCP server `t3-code`, passed on
 * create, on resume and on every send. The agent's model
 * runs on Cursor's backend, so it needs a Cursor credential and network.
 */

export interface CursorDriverDeps {
  /** Loads the SDK; tests pass a fake built from its published types. Default: a lazy import. */
  readonly loadSdk?: () => Promise<CursorSdk>;
  readonly probe?: (options: CursorOptions) => ProviderProbe;
  /** Where redacted diagnostics go. */
  readonly log?: (line: string) => void;
  readonly processEnv?: Readonly<Record<string, string | undefined>>;
}

async function importSdk(): Promise<CursorSdk> {
  return import("@cursor/sdk");
}

export function createCursorDriver(deps: CursorDriverDeps = {}): ProviderDriver {
  const loadSdk = deps.loadSdk ?? importSdk;
  const probe = deps.probe ?? ((options: CursorOptions) => probeCursor(options));
  const log = deps.log ?? (() => undefined);
  const processEnv = deps.processEnv ?? process.env;

  return {
    driver: CURSOR_DRIVER,
    optionsSchema: CursorOptionsSchema,

    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      return cursorCapabilities(instance);
    },

    probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      try {
        return Promise.resolve(probe(cursorOptions.parse(instance)));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      const options = optionsForSession(cursorOptions, input.instance);
      let sdk: CursorSdk;
      try {
        sdk = await loadSdk();
      } catch (error) {
        throw new ProviderError(ProviderErrorCode.notInstalled, "the Cursor SDK (@cursor/sdk) could not be loaded", { cause: error });
      }
      const apiKey = apiKeyOf(options, processEnv);
      const model = input.model ?? input.instance.models?.[0] ?? DEFAULT_CURSOR_MODELS[0] ?? "composer-2";
      const session = new CursorSession({
        sdk,
        createOptions: (customTools) =>
          agentOptions({ options, apiKey, model, cwd: input.cwd, mcp: input.mcp, runtimeMode: input.runtimeMode, interactionMode: input.interactionMode, customTools: customTools ?? {} }),
        sendOptions: sendOptions({ mcp: input.mcp, interactionMode: input.interactionMode }),
        cwd: input.cwd,
        startupTimeoutMs: options.startupTimeoutMs,
        onEvent: input.onEvent,
        log,
        secrets: [...(input.mcp === null ? [] : [input.mcp.token]), ...(apiKey === null ? [] : [apiKey])],
      });
      await session.open(input.signal, input.resume?.nativeThreadId ?? null);
      return session;
    },
  };
}

export const cursorDriver: ProviderDriver = createCursorDriver();
