import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { AdvertisedFactsCache, capabilitiesFrom } from "./capabilities.js";
import { type AcpFlavor, GENERIC_ACP_FLAVOR } from "./flavor.js";
import { GROK_FLAVOR } from "./grok.js";
import { type AcpOptions, acpOptionsSchema, parseAcpOptions } from "./options.js";
import { acpCacheRoot, findInstalled } from "./registryCache.js";
import { type AcpLaunch, AcpSession } from "./session.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * The ACP drivers (docs/providers/acp.md, docs/providers/grok.md): `acp`
 * runs any agent that speaks the Agent Client Protocol over stdio (a local
 * command or a prepared registry agent); `grok` is the same adapter with
 * xAI's extension requests. Each Loom provider session is one agent process
 * with one ACP session; Loom's MCP endpoint goes into session/new (load,
 * fork) as an HTTP server with the session's bearer token.
 *
 * capabilities() is pure: it reads what the agent advertised the last time a
 * probe or a session met it (capabilities.ts), and claims nothing before.
 */

export interface AcpDriverDeps {
  readonly flavor?: AcpFlavor;
  /** Loom's state directory: registry agents are prepared under it. Null: registry agents are unavailable. */
  readonly stateDir?: string | null;
  readonly log?: (line: string) => void;
  /** Shared between drivers that should share advertised facts (tests). */
  readonly facts?: AdvertisedFactsCache;
  /** How long a proof of readiness (a probe's or a session's session/new) spares the next probe a process. */
  readonly readyTtlMs?: number;
  readonly now?: () => number;
}

/** Starting an agent can take seconds (Gemini CLI: ~8 s), longer than the registry's probe TTL. */
export const DEFAULT_READY_TTL_MS = 60_000;

export function createAcpDriver(deps: AcpDriverDeps = {}): ProviderDriver {
  const flavor = deps.flavor ?? GENERIC_ACP_FLAVOR;
  const stateDir = deps.stateDir ?? null;
  const log = deps.log ?? (() => undefined);
  const facts = deps.facts ?? new AdvertisedFactsCache();
  const readyTtlMs = deps.readyTtlMs ?? DEFAULT_READY_TTL_MS;
  const now = deps.now ?? Date.now;
  /** Instance id → the launch that last proved ready, and when. Failures are never cached. */
  const ready = new Map<string, { readonly launch: string; readonly at: number }>();

  function launchOf(instance: ProviderInstanceConfig, options: AcpOptions): AcpLaunch {
    return resolveLaunch(instance, options, stateDir);
  }

  function fingerprint(launch: AcpLaunch): string {
    return [launch.command, ...launch.args].join("\u0000");
  }

  async function open(input: Omit<OpenSessionInput, "onEvent" | "threadId" | "providerSessionId"> & Partial<Pick<OpenSessionInput, "onEvent">>): Promise<AcpSession> {
    let options: AcpOptions;
    try {
      options = parseAcpOptions(input.instance, flavor.defaults);
    } catch (error) {
      throw new ProviderError(ProviderErrorCode.startFailed, messageOf(error), { cause: error });
    }
    const launch = launchOf(input.instance, options);
    const session = new AcpSession({
      launch,
      flavor,
      cwd: input.cwd,
      runtimeMode: input.runtimeMode,
      interactionMode: input.interactionMode,
      model: input.model,
      mcp: input.mcp,
      mcpServerName: options.mcpServerName,
      authMethod: options.authMethod,
      requestTimeoutMs: options.requestTimeoutMs,
      interruptGraceMs: options.interruptGraceMs,
      secrets: [...(input.mcp === null ? [] : [input.mcp.token]), ...Object.values(options.env).filter((value) => value.length >= 8)],
      onEvent: input.onEvent ?? (() => undefined),
      onFacts: (advertised) => facts.set(input.instance.id, fingerprint(launch), advertised),
      log,
    });
    await session.open(input.signal, input.resume?.nativeThreadId ?? null);
    ready.set(input.instance.id, { launch: fingerprint(launch), at: now() });
    return session;
  }

  return {
    driver: flavor.driver,
    optionsSchema: acpOptionsSchema(flavor.defaults),

    /** What the agent advertised when last seen; before that, nothing beyond the ACP base (interrupt, restart). */
    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      let key = "";
      try {
        key = fingerprint(launchOf(instance, parseAcpOptions(instance, flavor.defaults)));
      } catch {
        // Bad options or an unprepared agent: nothing was advertised; probe() says why.
      }
      const advertised = facts.get(instance.id, key);
      return capabilitiesFrom(advertised, instance.models);
    },

    /**
     * Installed: the command starts and answers initialize. Authenticated: a
     * disposable session/new succeeds (the readiness proof); ACP's
     * "authentication required" error says it is not. Any other failure (the
     * agent exits, answers garbage, times out) rejects, so the instance is
     * listed as "probe failed" with the agent's message rather than as a
     * missing login. The process is ended either way. A proof younger than
     * readyTtlMs (this probe's or a real session's) answers without starting
     * the agent again.
     */
    async probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      const options = parseAcpOptions(instance, flavor.defaults);
      let launch: AcpLaunch;
      try {
        launch = launchOf(instance, options);
      } catch (error) {
        return { installed: false, authenticated: false, reason: messageOf(error) };
      }
      const proven = ready.get(instance.id);
      if (proven !== undefined && proven.launch === fingerprint(launch) && now() - proven.at < readyTtlMs) return { installed: true, authenticated: true, reason: null };
      const cwd = await mkdtemp(join(tmpdir(), "loom-acp-probe-"));
      try {
        const session = await open({ instance, cwd, runtimeMode: "approval-required", interactionMode: "default", model: null, mcp: null });
        await session.stop();
        return { installed: true, authenticated: true, reason: null };
      } catch (error) {
        ready.delete(instance.id);
        const code = error instanceof ProviderError ? error.code : ProviderErrorCode.startFailed;
        if (code === ProviderErrorCode.notInstalled) return { installed: false, authenticated: false, reason: `${launch.command}: ${messageOf(error)}` };
        if (code === ProviderErrorCode.notAuthenticated) return { installed: true, authenticated: false, reason: messageOf(error) };
        throw error;
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      return open(input);
    },
  };
}

/**
 * How to start the agent: a registry agent's prepared command, arguments and
 * environment (options.command overrides the command only, options.args
 * come after the registry's), else options.command. Throws ProviderError
 * not_installed for a registry agent that was not prepared.
 */
export function resolveLaunch(instance: ProviderInstanceConfig, options: AcpOptions, stateDir: string | null): AcpLaunch {
  if (options.registryAgent === null) {
    if (options.command === null) throw new ProviderError(ProviderErrorCode.startFailed, `instance "${instance.id}" names no command`);
    return { command: options.command, args: options.args, env: { ...process.env, ...options.env } };
  }
  if (stateDir === null) throw new ProviderError(ProviderErrorCode.notInstalled, `registry agent ${options.registryAgent}: this Loom has no state directory for prepared agents`);
  const installed = findInstalled(acpCacheRoot(stateDir), options.registryAgent, options.registryVersion);
  if (installed === null) {
    const version = options.registryVersion === null ? "" : ` ${options.registryVersion}`;
    throw new ProviderError(ProviderErrorCode.notInstalled, `registry agent ${options.registryAgent}${version} is not prepared: run \`loom providers prepare ${options.registryAgent}\``);
  }
  return {
    command: options.command ?? installed.command,
    args: [...installed.args, ...options.args],
    env: { ...process.env, ...installed.env, ...options.env },
  };
}

/** The `grok` driver: the same adapter with xAI's extension requests. */
export function createGrokDriver(deps: Omit<AcpDriverDeps, "flavor"> = {}): ProviderDriver {
  return createAcpDriver({ ...deps, flavor: GROK_FLAVOR });
}
