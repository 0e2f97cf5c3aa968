import { access, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime, WarmOpenInput, WarmProviderSession } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { ClaudeOptions } from "./options.js";
import { optionsForSession, optionsOrNull } from "../kit/driverOptions.js";
import { CLAUDE_DRIVER, ClaudeOptionsSchema, DEFAULT_CLAUDE_CAPABILITIES, claudeCapabilities, claudeOptions } from "./options.js";
import { installationProblem, probeClaude } from "./probe.js";
import { buildQueryOptions } from "./queryOptions.js";
import type { QueryFunction } from "./session.js";
import { ClaudeSession } from "./session.js";
import { openClaudeWarm } from "./warm.js";

/**
 * The `claude` driver: Claude Code through the Claude Agent SDK
 * (docs/providers/claude.md). Each Loom provider session is one SDK
 * `query()` with streaming input; Loom's MCP endpoint is injected as the
 * `t3-code` HTTP server with the session's bearer token.
 */

export interface ClaudeDriverDeps {
  /** Where the driver's log lines go. They never hold the session token. */
  readonly log?: (line: string) => void;
  /** Loads the SDK's `query`; tests pass a fake. Default: a lazy import of the SDK. */
  readonly loadQuery?: () => Promise<QueryFunction>;
  readonly probe?: (options: ClaudeOptions) => ProviderProbe;
  /** Why Claude Code cannot be started, or null; checked when a session opens. */
  readonly installationProblem?: (options: ClaudeOptions) => string | null;
  /** Whether Loom runs as root (bypassPermissions then needs IS_SANDBOX=1). */
  readonly isRoot?: boolean;
}

/** The SDK is large: it is imported when the first session opens, not when Loom starts. */
async function importQuery(): Promise<QueryFunction> {
  const sdk = await import("@anthropic-ai/claude-agent-sdk");
  return sdk.query;
}

export function createClaudeDriver(deps: ClaudeDriverDeps = {}): ProviderDriver {
  const log = deps.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const loadQuery = deps.loadQuery ?? importQuery;
  const probe = deps.probe ?? ((options: ClaudeOptions) => probeClaude(options));
  const notInstalled = deps.installationProblem ?? ((options: ClaudeOptions) => installationProblem(options));
  const isRoot = deps.isRoot ?? process.getuid?.() === 0;

  return {
    driver: CLAUDE_DRIVER,
    optionsSchema: ClaudeOptionsSchema,

    /** Bad options fall back to the defaults here; probe() reports them. */
    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      if (optionsOrNull(claudeOptions, instance) === null) return { ...DEFAULT_CLAUDE_CAPABILITIES, models: instance.models ?? DEFAULT_CLAUDE_CAPABILITIES.models };
      return claudeCapabilities(instance);
    },

    probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      try {
        return Promise.resolve(probe(claudeOptions.parse(instance)));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      const options: ClaudeOptions = optionsForSession(claudeOptions, input.instance);
      const query = await installedQuery(options);
      // CLAUDE_CONFIG_DIR: the configured one, else the thread's own folder kept across sessions (so its saved sessions can be resumed), else a temp dir.
      const keptDir = options.configDir === null && input.home != null ? input.home : null;
      if (keptDir !== null) await mkdir(keptDir, { recursive: true, mode: 0o700 });
      const tempDir = options.configDir === null && keptDir === null ? await mkdtemp(join(tmpdir(), "loom-claude-")) : null;
      const configDir = options.configDir ?? keptDir ?? tempDir ?? "";
      const persist = tempDir === null;
      const resume = persist && input.resume != null && (await hasSavedSession(configDir, input.resume.nativeThreadId)) ? input.resume.nativeThreadId : null;
      const session = new ClaudeSession({
        providerSessionId: input.providerSessionId,
        cwd: input.cwd,
        query,
        buildOptions: (hooks) =>
          buildQueryOptions(
            {
              cwd: input.cwd,
              model: input.model,
              runtimeMode: input.runtimeMode,
              interactionMode: input.interactionMode,
              mcp: input.mcp,
              configDir,
              persist,
              options,
              baseEnv: process.env,
              ...(input.traceEnvironment === undefined ? {} : { traceEnvironment: input.traceEnvironment }),
              isRoot,
            },
            hooks,
          ),
        secret: input.mcp?.token ?? null,
        resume,
        nativeSchema: persist,
        outputSchema: input.outputSchema ?? null,
        startupTimeoutMs: options.startupTimeoutMs,
        onEvent: input.onEvent,
        log,
        cleanup: async () => {
          if (tempDir !== null) await rm(tempDir, { recursive: true, force: true });
        },
      });
      await session.open(input.signal);
      return session;
    },

    /** Claude Code started like the instance's most recent session; Loom's MCP server is added at bind (claude/warm.ts). */
    async openWarm(input: WarmOpenInput): Promise<WarmProviderSession> {
      const options: ClaudeOptions = optionsForSession(claudeOptions, input.instance);
      return openClaudeWarm(input, { options, query: await installedQuery(options), isRoot, log });
    },
    warmNeedsDemand: true,
  };

  /** The SDK's query(); a missing executable or SDK is not_installed (not retryable), not a failed start. */
  async function installedQuery(options: ClaudeOptions): Promise<QueryFunction> {
    const missing = notInstalled(options);
    if (missing !== null) throw new ProviderError(ProviderErrorCode.notInstalled, missing);
    try {
      return await loadQuery();
    } catch (error) {
      throw new ProviderError(ProviderErrorCode.notInstalled, "the Claude Agent SDK (@anthropic-ai/claude-agent-sdk) could not be loaded", { cause: error });
    }
  }
}

/** Whether Claude Code saved session `id` under the config dir (`projects/<cwd>/<id>.jsonl`). */
async function hasSavedSession(configDir: string, id: string): Promise<boolean> {
  const projects = join(configDir, "projects");
  const folders = await readdir(projects).catch(() => [] as string[]);
  for (const folder of folders) {
    if (await access(join(projects, folder, `${id}.jsonl`)).then(() => true, () => false)) return true;
  }
  return false;
}

export const claudeDriver: ProviderDriver = createClaudeDriver();
