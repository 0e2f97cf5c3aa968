import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { z } from "zod";
import { formatZodIssues } from "../contracts/zodIssues.js";
import { type ModelPrice, ModelPriceSchema } from "../contracts/entities/budgets.js";
import { ToolProfile } from "../contracts/tools/discoveryTools.js";
import { ConfigError, ConfigErrorCode } from "./configError.js";
import { TelemetrySchema, type TelemetryFileConfig } from "./telemetry.js";

/**
 * The Loom config file. Every section is optional: without a file Loom runs
 * one project ("default", at the working directory) and one provider instance
 * (the built-in `scripted` driver). Relative project roots resolve against the
 * directory of the config file, an explicit config path against `cwd`.
 */
/** Looked for in the state directory when no --config is given. */
export const DEFAULT_CONFIG_FILE = "config.json";

/** Instance and project ids appear in MCP tool inputs, so they stay plain. */
const IdSchema = z
  .string({ error: "must be a string" })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    error: "must be 1-64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit",
  });
const NonEmptySchema = z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" });
/** Upper bounds of the config's numbers (docs/configuration.md). */
export const CONFIG_MAXIMUMS = {
  /** Every wait is capped here: an agent CLI's own tool timeout must not fire first. */
  maxWaitMs: 60 * 60_000,
  sessionIdleMs: 7 * 24 * 60 * 60_000,
  logMaxFileBytes: 1024 * 1024 * 1024,
  logMaxFiles: 1_000,
  credentialIdleTtlMs: 7 * 24 * 60 * 60_000,
  credentialMaxLifetimeMs: 30 * 24 * 60 * 60_000,
  maxActiveChildrenPerThread: 1_000,
  maxSpawnsPerRootThread: 100_000,
  maxDelegationDepth: 64,
  titleTimeoutMs: 10 * 60_000,
  setupTimeoutMs: 24 * 60 * 60_000,
  schedulerMinIntervalMs: 366 * 24 * 60 * 60_000,
  webhookMaxBodyBytes: 64 * 1024 * 1024,
  webhookToleranceMs: 24 * 60 * 60_000,
  nodeHeartbeatMs: 60_000,
  nodeLeaseMs: 60 * 60_000,
  poolSize: 16,
  poolMaxIdleMs: 7 * 24 * 60 * 60_000,
  failoverInstances: 8,
} as const;

/** A whole positive number of milliseconds, at most `max`. */
function positiveMs(max: number) {
  return z
    .number({ error: "must be a number of milliseconds" })
    .int({ error: "must be a whole number of milliseconds" })
    .positive({ error: "must be greater than 0" })
    .max(max, { error: `must be at most ${max} ms` });
}

/** A whole positive count, at most `max`. */
function positiveCount(max: number) {
  return z
    .number({ error: "must be a number" })
    .int({ error: "must be a whole number" })
    .positive({ error: "must be greater than 0" })
    .max(max, { error: `must be at most ${max}` });
}

/** A warm pool of idle agent sessions kept ready for a thread's first turn (docs/warm-pools.md). */
export const PoolSchema = z.strictObject({
  /** Warm sessions to keep ready; 0 turns the pool off. */
  size: z
    .number({ error: "must be a number" })
    .int({ error: "must be a whole number" })
    .min(0, { error: "must be at least 0" })
    .max(CONFIG_MAXIMUMS.poolSize, { error: `must be at most ${CONFIG_MAXIMUMS.poolSize}` }),
  /** The pool drains when no session opened on the instance for this long, and fills again on the next one. */
  maxIdleMs: positiveMs(CONFIG_MAXIMUMS.poolMaxIdleMs).optional(),
});

export const ProviderInstanceEntrySchema = z.strictObject({
  id: IdSchema,
  driver: NonEmptySchema,
  enabled: z.boolean({ error: "must be true or false" }).optional(),
  displayName: NonEmptySchema.optional(),
  models: z.array(NonEmptySchema).min(1, { error: "must list at least one model, or be left out" }).optional(),
  /** Models the user marked as favorites: orchestrator_capabilities lists them first. */
  favoriteModels: z.array(NonEmptySchema).optional(),
  /** Models the user added that the catalog does not list: accepted as targets and listed first. */
  customModels: z.array(NonEmptySchema).optional(),
  options: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
  pool: PoolSchema.optional(),
  /** What a restart or a lost node does to the instance's runs: resume (start again as a new attempt) or fail; default: resume delegated and workflow work only. */
  onCrash: z.enum(["resume", "fail"], { error: 'must be "resume" or "fail"' }).optional(),
  /** Per model (or `*` for any other), US dollars per million tokens: a run's cost when the provider reports none (docs/budgets.md, "Cost"). */
  prices: z.record(NonEmptySchema, ModelPriceSchema, { error: "must be an object of model names to prices" }).optional(),
  /** Which tools the instance's agents see in tools/list: core (plus loom_tools to reach the rest) or full (docs/mcp.md, "Tool profiles"). */
  toolProfile: z.enum(ToolProfile, { error: 'must be "core" or "full"' }).optional(),
  /** Instances, in order, that take over this instance's work when it is unavailable or hits a usage limit (docs/limits.md, "Failover"). */
  failover: z.array(NonEmptySchema).max(CONFIG_MAXIMUMS.failoverInstances, { error: `must list at most ${CONFIG_MAXIMUMS.failoverInstances} instances` }).optional(),
  /** After a usage limit stops a run, resume its work by itself once the limit resets (docs/limits.md, "Waiting for the reset"); default true. */
  autoResume: z.boolean({ error: "must be true or false" }).optional(),
});

export const ProjectEntrySchema = z.strictObject({
  id: IdSchema,
  root: NonEmptySchema,
  name: NonEmptySchema.optional(),
  /** Shell command run in every worktree Loom makes for the project before its agent starts (e.g. `npm ci`). */
  setup: NonEmptySchema.optional(),
  /** The setup command is stopped (and the run fails) after this long. */
  setupTimeoutMs: positiveMs(CONFIG_MAXIMUMS.setupTimeoutMs).optional(),
  /** Shell command that must pass on a worktree child's merged state before its parent moves (e.g. `npm test`). */
  checkCommand: NonEmptySchema.optional(),
  /** The check is stopped (and the merge refused) after this long. */
  checkTimeoutMs: positiveMs(CONFIG_MAXIMUMS.setupTimeoutMs).optional(),
  /** Who resolves a refused merge queued with onRefused resolver and no resolver of its own (docs/workspaces.md, "Resolver tasks"). */
  resolver: z.strictObject({ providerInstanceId: IdSchema, model: NonEmptySchema.optional(), instructions: NonEmptySchema.optional() }).optional(),
});

export const WorkspacesSchema = z.strictObject({
  /** Where Loom-managed worktrees go: <worktreesDir>/<project id>/<thread slug>. Default <state-dir>/worktrees. */
  worktreesDir: NonEmptySchema.optional(),
  /** Prefix of the branches of Loom-managed worktrees. */
  branchPrefix: z
    .string({ error: "must be a string" })
    .regex(/^([A-Za-z0-9_-][A-Za-z0-9._-]*\/)*$/, { error: "must be empty or segments of letters, digits, '.', '_' or '-', each ending in '/'" })
    .optional(),
  /** Capture a checkpoint before and after every turn that may write. */
  checkpoints: z.boolean({ error: "must be true or false" }).optional(),
  /** The first port of the first worktree's port block (docs/workspaces.md, "Isolation beyond files"). */
  portRangeStart: z.number({ error: "must be a number" }).int({ error: "must be a whole number" }).min(1024, { error: "must be at least 1024" }).max(65_535, { error: "must be at most 65535" }).optional(),
  /** Ports in each worktree's block. */
  portBlockSize: positiveCount(1_000).optional(),
});

export const LimitsSchema = z.strictObject({
  /** Children of one parent thread that may be active at the same time. */
  maxActiveChildrenPerThread: positiveCount(CONFIG_MAXIMUMS.maxActiveChildrenPerThread).optional(),
  /** Delegated tasks one root thread's whole tree may ever spawn: a budget ceiling. */
  maxSpawnsPerRootThread: positiveCount(CONFIG_MAXIMUMS.maxSpawnsPerRootThread).optional(),
  /** How deep delegation may nest below a root thread. */
  maxDelegationDepth: positiveCount(CONFIG_MAXIMUMS.maxDelegationDepth).optional(),
});

export const CredentialsSchema = z.strictObject({
  idleTtlMs: positiveMs(CONFIG_MAXIMUMS.credentialIdleTtlMs).optional(),
  maxLifetimeMs: positiveMs(CONFIG_MAXIMUMS.credentialMaxLifetimeMs).optional(),
});

export const SessionsSchema = z.strictObject({
  /** A provider session with no run and nothing queued is released this long after its last activity. */
  idleMs: positiveMs(CONFIG_MAXIMUMS.sessionIdleMs).optional(),
  /** A provider session whose run has been silent this long is released; the run is interrupted. */
  stalledMs: positiveMs(CONFIG_MAXIMUMS.sessionIdleMs).optional(),
});

/** The levels of the server's log file, most severe first. */
export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LogLevelSchema = z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` });

/** The server's log file, `<state-dir>/logs/loom.log`. */
export const LogSchema = z.strictObject({
  level: LogLevelSchema.optional(),
  /** The file is rotated (loom.log.1, .2, ...) once it reaches this size. */
  maxFileBytes: positiveCount(CONFIG_MAXIMUMS.logMaxFileBytes).optional(),
  /** Rotated files kept; the oldest is removed past this count. */
  maxFiles: positiveCount(CONFIG_MAXIMUMS.logMaxFiles).optional(),
});

export const WaitsSchema = z.strictObject({
  maxWaitMs: positiveMs(CONFIG_MAXIMUMS.maxWaitMs).optional(),
});

/** Title regeneration (t3_thread_update regenerate_title): a short titling turn on a provider instance. */
export const TitlesSchema = z.strictObject({
  /** The provider instance that writes titles; default: the thread's own. */
  providerInstanceId: IdSchema.optional(),
  /** Its model; default: the instance's first model (the thread's own model on the thread's instance). */
  model: NonEmptySchema.optional(),
  /** How long the titling turn may take before the first-line title is used instead. */
  timeoutMs: positiveMs(CONFIG_MAXIMUMS.titleTimeoutMs).optional(),
});

/** Scheduled tasks (docs/schedules.md). */
export const SchedulerSchema = z.strictObject({
  /** The shortest interval a task may fire at. */
  minIntervalMs: positiveMs(CONFIG_MAXIMUMS.schedulerMinIntervalMs).optional(),
  /** IANA time zone of daily triggers; default: the server's local time zone. */
  timeZone: NonEmptySchema.optional(),
  /** Largest webhook body accepted, in bytes. */
  webhookMaxBodyBytes: positiveCount(CONFIG_MAXIMUMS.webhookMaxBodyBytes).optional(),
  /** How far a signed webhook's X-Loom-Timestamp may be from the server's clock, either way. */
  webhookToleranceMs: positiveMs(CONFIG_MAXIMUMS.webhookToleranceMs).optional(),
});

/** The shared database of several Loom nodes (docs/postgres.md). */
export const DatabaseSchema = z.strictObject({
  /** postgres://user:password@host:port/database; absent: SQLite in the state directory. */
  url: z.string({ error: "must be a string" }).regex(/^postgres(ql)?:\/\//, { error: "must be a postgres:// or postgresql:// URL" }).optional(),
  /** The schema holding Loom's tables: a lower-case identifier. */
  schema: z.string({ error: "must be a string" }).regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: "must be a lower-case identifier" }).optional(),
});

/** Workflow scripts (docs/workflows.md). */
export const WorkflowsSchema = z.strictObject({
  /** How many agent() tasks of one workflow run at once; more calls wait their turn. */
  maxConcurrentAgents: positiveCount(CONFIG_MAXIMUMS.maxActiveChildrenPerThread).optional(),
});

/** Node heartbeats and leases on a shared database (docs/postgres.md). */
export const NodesSchema = z
  .strictObject({
    /** How often a node records that it is alive. */
    heartbeatMs: positiveMs(CONFIG_MAXIMUMS.nodeHeartbeatMs).optional(),
    /** A node silent this long loses its leases; its runs end node_lost. */
    leaseMs: positiveMs(CONFIG_MAXIMUMS.nodeLeaseMs).optional(),
  })
  .refine((nodes) => (nodes.leaseMs ?? DEFAULT_NODES.leaseMs) >= 2 * (nodes.heartbeatMs ?? DEFAULT_NODES.heartbeatMs), {
    error: "leaseMs must be at least twice heartbeatMs",
  });

/** What the server sends on the wire (docs/wire.md#compression). */
export const WireSchema = z.strictObject({
  /**
   * HTTP compression (br, gzip) and WebSocket permessage-deflate: "remote" (the default) for clients on another
   * machine only, true for every client, loopback ones too; false sends every answer and frame uncompressed.
   */
  compression: z.union([z.boolean(), z.literal("remote")], { error: 'must be true, false or "remote"' }).optional(),
});

function checkUnique(ids: readonly string[], label: string, key: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) {
      ctx.addIssue({ code: "custom", path: [key, index, "id"], message: `duplicate ${label} id "${id}"` });
    }
    seen.add(id);
  });
}

/** Every instance a `failover` list names is configured, is not the instance itself, and is named once. */
function checkFailover(providers: readonly { readonly id: string; readonly failover?: readonly string[] | undefined }[], ctx: z.RefinementCtx): void {
  const ids = new Set(providers.map((p) => p.id));
  providers.forEach((provider, index) => {
    const seen = new Set<string>();
    (provider.failover ?? []).forEach((id, at) => {
      const path = ["providers", index, "failover", at];
      if (id === provider.id) ctx.addIssue({ code: "custom", path, message: "an instance cannot fail over to itself" });
      else if (!ids.has(id)) ctx.addIssue({ code: "custom", path, message: `no provider instance named "${id}"; the instances are ${[...ids].join(", ")}` });
      else if (seen.has(id)) ctx.addIssue({ code: "custom", path, message: `"${id}" is listed twice` });
      seen.add(id);
    });
  });
}

export const LoomConfigSchema = z
  .strictObject({
    providers: z.array(ProviderInstanceEntrySchema).optional(),
    projects: z.array(ProjectEntrySchema).optional(),
    limits: LimitsSchema.optional(),
    credentials: CredentialsSchema.optional(),
    waits: WaitsSchema.optional(),
    sessions: SessionsSchema.optional(),
    log: LogSchema.optional(),
    titles: TitlesSchema.optional(),
    workspaces: WorkspacesSchema.optional(),
    scheduler: SchedulerSchema.optional(),
    database: DatabaseSchema.optional(),
    nodes: NodesSchema.optional(),
    workflows: WorkflowsSchema.optional(),
    wire: WireSchema.optional(),
    /** Trace export (docs/telemetry.md); the OTEL_* variables win over it. */
    telemetry: TelemetrySchema.optional(),
  })
  .superRefine((config, ctx) => {
    checkUnique((config.providers ?? []).map((p) => p.id), "provider", "providers", ctx);
    checkFailover(config.providers ?? [], ctx);
    checkUnique((config.projects ?? []).map((p) => p.id), "project", "projects", ctx);
    const agents = config.workflows?.maxConcurrentAgents;
    const children = config.limits?.maxActiveChildrenPerThread ?? DEFAULT_LIMITS.maxActiveChildrenPerThread;
    if (agents !== undefined && agents > children) {
      ctx.addIssue({
        code: "custom",
        path: ["workflows", "maxConcurrentAgents"],
        message: `must be at most limits.maxActiveChildrenPerThread (${children}): every running agent() task is an unfinished task of the workflow's parent thread`,
      });
    }
  });
export type LoomConfigFile = z.input<typeof LoomConfigSchema>;

/** A provider instance after defaults: what drivers and the registry see. */
export interface ProviderInstanceConfig {
  readonly id: string;
  readonly driver: string;
  readonly enabled: boolean;
  /** Null: the registry shows the instance id. */
  readonly displayName: string | null;
  /** Null: use the models the driver advertises. */
  readonly models: readonly string[] | null;
  /** Listed first by orchestrator_capabilities (absent: none). */
  readonly favoriteModels?: readonly string[];
  /** Added by the user beyond the catalog: accepted as targets, listed first (absent: none). */
  readonly customModels?: readonly string[];
  /** Driver-specific settings, validated by the driver, never by Loom. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The warm pool; absent or size 0: off. */
  readonly pool?: PoolConfig;
  /** Absent: delegated and workflow work resumes after a crash, other runs end interrupted (docs/runs.md). */
  readonly onCrash?: "resume" | "fail";
  /** Per model, or `*`: costs computed for runs whose provider reports none; absent: none computed. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** The tool profile of the credentials its sessions get; absent: full. */
  readonly toolProfile?: ToolProfile;
  /** Instances that take over its work, in order, when it is unavailable or limited (absent: none). */
  readonly failover?: readonly string[];
  /** False: work a usage limit stopped waits for a message after the reset instead of resuming by itself (absent: true). */
  readonly autoResume?: boolean;
}

export interface PoolConfig {
  readonly size: number;
  readonly maxIdleMs: number;
}

export const DEFAULT_POOL_MAX_IDLE_MS = 10 * 60_000;

export interface ProjectConfig {
  readonly id: string;
  /** Absolute path. */
  readonly root: string;
  readonly name: string;
  /** Setup command for worktrees Loom makes (a shell command line); none when absent. */
  readonly setup?: string;
  /** Default DEFAULT_SETUP_TIMEOUT_MS. */
  readonly setupTimeoutMs?: number;
  /** Check a merge into a parent must pass (a shell command line); none when absent. */
  readonly checkCommand?: string;
  /** Default DEFAULT_SETUP_TIMEOUT_MS. */
  readonly checkTimeoutMs?: number;
  /** The resolver of refused merges queued with onRefused resolver and none of their own. */
  readonly resolver?: { readonly providerInstanceId: string; readonly model?: string; readonly instructions?: string };
}

export interface WorkspacesConfig {
  /** Absolute path, or null: <state-dir>/worktrees. */
  readonly worktreesDir: string | null;
  readonly branchPrefix: string;
  readonly checkpoints: boolean;
  /** Worktree block N holds ports portRangeStart + N * portBlockSize up to the next block. */
  readonly portRangeStart: number;
  readonly portBlockSize: number;
}

export interface LimitsConfig {
  readonly maxActiveChildrenPerThread: number;
  readonly maxSpawnsPerRootThread: number;
  readonly maxDelegationDepth: number;
}

export interface CredentialsConfig {
  readonly idleTtlMs: number;
  readonly maxLifetimeMs: number;
}

export interface SessionsConfig {
  readonly idleMs: number;
  readonly stalledMs: number;
}

export interface LogConfig {
  readonly level: LogLevel;
  readonly maxFileBytes: number;
  readonly maxFiles: number;
}

export interface WaitsConfig {
  /** Server cap on any blocking MCP wait (DESIGN invariant 7). */
  readonly maxWaitMs: number;
}

export interface TitlesConfig {
  /** Null: the thread's own provider instance. */
  readonly providerInstanceId: string | null;
  readonly model: string | null;
  readonly timeoutMs: number;
}

export interface SchedulerConfig {
  readonly minIntervalMs: number;
  /** Null: the server's local time zone. */
  readonly timeZone: string | null;
  readonly webhookMaxBodyBytes: number;
  readonly webhookToleranceMs: number;
}

export interface DatabaseConfig {
  /** Null: SQLite in the state directory. */
  readonly url: string | null;
  readonly schema: string;
}

export interface WorkflowsConfig {
  readonly maxConcurrentAgents: number;
}

export interface NodesConfig {
  readonly heartbeatMs: number;
  readonly leaseMs: number;
}

export interface WireConfig {
  /** HTTP answers by Accept-Encoding and WebSocket permessage-deflate: "remote" for clients off this machine, true for all, false for none. */
  readonly compression: boolean | "remote";
}

export interface LoomConfig {
  /** Absolute path of the file that was read, or null when none was. */
  readonly source: string | null;
  readonly providers: readonly ProviderInstanceConfig[];
  readonly projects: readonly ProjectConfig[];
  readonly limits: LimitsConfig;
  readonly credentials: CredentialsConfig;
  readonly waits: WaitsConfig;
  readonly sessions: SessionsConfig;
  readonly log: LogConfig;
  readonly titles: TitlesConfig;
  readonly workspaces: WorkspacesConfig;
  readonly scheduler: SchedulerConfig;
  readonly database: DatabaseConfig;
  readonly nodes: NodesConfig;
  readonly workflows: WorkflowsConfig;
  readonly wire: WireConfig;
  /** The file's telemetry section as written (null: none); resolveTelemetry adds the environment. */
  readonly telemetry: TelemetryFileConfig | null;
}

export const DEFAULT_DATABASE: DatabaseConfig = { url: null, schema: "public" };
export const DEFAULT_WORKFLOWS: WorkflowsConfig = { maxConcurrentAgents: 8 };
export const DEFAULT_WIRE: WireConfig = { compression: "remote" };
export const DEFAULT_NODES: NodesConfig = { heartbeatMs: 2_000, leaseMs: 15_000 };
export const DEFAULT_SCHEDULER: SchedulerConfig = { minIntervalMs: 60_000, timeZone: null, webhookMaxBodyBytes: 1024 * 1024, webhookToleranceMs: 5 * 60_000 };
export const DEFAULT_TITLES: TitlesConfig = { providerInstanceId: null, model: null, timeoutMs: 60_000 };
export const DEFAULT_SETUP_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_WORKSPACES: WorkspacesConfig = { worktreesDir: null, branchPrefix: "loom/", checkpoints: true, portRangeStart: 41_000, portBlockSize: 10 };
export const DEFAULT_LIMITS: LimitsConfig = { maxActiveChildrenPerThread: 16, maxSpawnsPerRootThread: 64, maxDelegationDepth: 4 };
export const DEFAULT_CREDENTIALS: CredentialsConfig = { idleTtlMs: 30 * 60_000, maxLifetimeMs: 24 * 60 * 60_000 };
/** Short enough that an agent CLI's own tool timeout does not fire first. */
export const DEFAULT_WAITS: WaitsConfig = { maxWaitMs: 30_000 };
export const DEFAULT_SESSIONS: SessionsConfig = { idleMs: 2 * 60_000, stalledMs: 15 * 60_000 };
export const DEFAULT_LOG: LogConfig = { level: "info", maxFileBytes: 10 * 1024 * 1024, maxFiles: 5 };
export const DEFAULT_PROVIDER: ProviderInstanceConfig = {
  id: "scripted",
  driver: "scripted",
  enabled: true,
  displayName: null,
  models: null,
  options: {},
};

export { ConfigError, ConfigErrorCode } from "./configError.js";

/**
 * Read the config. An explicit `path` must exist; the default file
 * (`<stateDir>/config.json`) may be missing, which yields the defaults.
 * Projects without a config default to one project at `cwd`.
 */
export function loadConfig(path: string | undefined, stateDir: string, cwd: string): LoomConfig {
  const file = path === undefined ? resolve(stateDir, DEFAULT_CONFIG_FILE) : resolve(cwd, path);
  if (!existsSync(file)) {
    if (path !== undefined) {
      throw new ConfigError(ConfigErrorCode.notFound, `config file not found: ${file}`);
    }
    return resolveConfig({}, null, cwd);
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(ConfigErrorCode.unreadable, `cannot read config file ${file}: ${messageOf(error)}`);
  }
  return parseConfigText(text, file, cwd);
}

/** Parse config text that came from `file` (used for messages and relative roots). */
export function parseConfigText(text: string, file: string, cwd: string): LoomConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(ConfigErrorCode.invalid, `invalid config ${file}: not valid JSON: ${messageOf(error)}`);
  }
  const parsed = LoomConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(ConfigErrorCode.invalid, `invalid config ${file}: ${formatZodIssues(parsed.error, { labelRoot: true })}`);
  }
  return resolveConfig(parsed.data, file, cwd);
}

function resolveConfig(file: z.output<typeof LoomConfigSchema>, source: string | null, cwd: string): LoomConfig {
  const baseDir = source === null ? cwd : dirname(source);
  const providers = (file.providers ?? []).map(
    (p): ProviderInstanceConfig => ({
      id: p.id,
      driver: p.driver,
      enabled: p.enabled ?? true,
      displayName: p.displayName ?? null,
      models: p.models ?? null,
      ...(p.favoriteModels === undefined ? {} : { favoriteModels: p.favoriteModels }),
      ...(p.customModels === undefined ? {} : { customModels: p.customModels }),
      options: p.options ?? {},
      ...(p.pool === undefined ? {} : { pool: { size: p.pool.size, maxIdleMs: p.pool.maxIdleMs ?? DEFAULT_POOL_MAX_IDLE_MS } }),
      ...(p.onCrash === undefined ? {} : { onCrash: p.onCrash }),
      ...(p.prices === undefined ? {} : { prices: p.prices }),
      ...(p.toolProfile === undefined ? {} : { toolProfile: p.toolProfile }),
      ...(p.failover === undefined || p.failover.length === 0 ? {} : { failover: p.failover }),
      ...(p.autoResume === undefined ? {} : { autoResume: p.autoResume }),
    }),
  );
  const projects = (file.projects ?? []).map((p): ProjectConfig => {
    const root = resolve(baseDir, p.root);
    return {
      id: p.id,
      root,
      name: p.name ?? nameOf(root),
      ...(p.setup === undefined ? {} : { setup: p.setup }),
      ...(p.setupTimeoutMs === undefined ? {} : { setupTimeoutMs: p.setupTimeoutMs }),
      ...(p.checkCommand === undefined ? {} : { checkCommand: p.checkCommand }),
      ...(p.checkTimeoutMs === undefined ? {} : { checkTimeoutMs: p.checkTimeoutMs }),
      ...(p.resolver === undefined ? {} : { resolver: p.resolver }),
    };
  });
  const defaultRoot = resolve(cwd);
  return {
    source,
    providers: providers.length > 0 ? providers : [DEFAULT_PROVIDER],
    projects: projects.length > 0 ? projects : [{ id: "default", root: defaultRoot, name: nameOf(defaultRoot) }],
    limits: { ...DEFAULT_LIMITS, ...file.limits },
    credentials: { ...DEFAULT_CREDENTIALS, ...file.credentials },
    waits: { ...DEFAULT_WAITS, ...file.waits },
    sessions: { ...DEFAULT_SESSIONS, ...file.sessions },
    log: { ...DEFAULT_LOG, ...file.log },
    titles: {
      providerInstanceId: file.titles?.providerInstanceId ?? DEFAULT_TITLES.providerInstanceId,
      model: file.titles?.model ?? DEFAULT_TITLES.model,
      timeoutMs: file.titles?.timeoutMs ?? DEFAULT_TITLES.timeoutMs,
    },
    workspaces: {
      worktreesDir: file.workspaces?.worktreesDir === undefined ? null : resolve(baseDir, file.workspaces.worktreesDir),
      branchPrefix: file.workspaces?.branchPrefix ?? DEFAULT_WORKSPACES.branchPrefix,
      checkpoints: file.workspaces?.checkpoints ?? DEFAULT_WORKSPACES.checkpoints,
      portRangeStart: file.workspaces?.portRangeStart ?? DEFAULT_WORKSPACES.portRangeStart,
      portBlockSize: file.workspaces?.portBlockSize ?? DEFAULT_WORKSPACES.portBlockSize,
    },
    scheduler: {
      minIntervalMs: file.scheduler?.minIntervalMs ?? DEFAULT_SCHEDULER.minIntervalMs,
      timeZone: file.scheduler?.timeZone ?? DEFAULT_SCHEDULER.timeZone,
      webhookMaxBodyBytes: file.scheduler?.webhookMaxBodyBytes ?? DEFAULT_SCHEDULER.webhookMaxBodyBytes,
      webhookToleranceMs: file.scheduler?.webhookToleranceMs ?? DEFAULT_SCHEDULER.webhookToleranceMs,
    },
    database: { url: file.database?.url ?? DEFAULT_DATABASE.url, schema: file.database?.schema ?? DEFAULT_DATABASE.schema },
    nodes: { heartbeatMs: file.nodes?.heartbeatMs ?? DEFAULT_NODES.heartbeatMs, leaseMs: file.nodes?.leaseMs ?? DEFAULT_NODES.leaseMs },
    workflows: {
      maxConcurrentAgents: file.workflows?.maxConcurrentAgents ?? Math.min(DEFAULT_WORKFLOWS.maxConcurrentAgents, file.limits?.maxActiveChildrenPerThread ?? DEFAULT_LIMITS.maxActiveChildrenPerThread),
    },
    wire: { compression: file.wire?.compression ?? DEFAULT_WIRE.compression },
    telemetry: file.telemetry ?? null,
  };
}

function nameOf(root: string): string {
  return basename(root) || root;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
