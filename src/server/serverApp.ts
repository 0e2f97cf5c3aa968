import { join, resolve } from "node:path";
import { type App, bindApp } from "../app/app.js";
import type { AppContext } from "../app/context.js";
import { schedulerTimeZone } from "../app/schedules/dueTimes.js";
import { FileWebhookKeyStore } from "../app/schedules/webhookKeys.js";
import { GuestShareKey } from "../app/guestShare/shareKey.js";
import { SqliteWebhookDeliveries } from "../store/webhookDeliveries/sqliteWebhookDeliveries.js";
import { TitleRegenerations, reconcileTitleRegenerations } from "../app/threads/titleRegeneration.js";
import { WorkflowRunner } from "../app/workflows/runner.js";
import { DEFAULT_CONFIG_FILE } from "../config/config.js";
import { LimitResumer } from "../scheduler/limitResumer.js";
import { BackgroundSettler } from "../scheduler/backgroundSettler.js";
import { shareLimitWindows } from "../app/limits/limitWindows.js";
import { PullRequestWatcher } from "../scheduler/pullRequestWatcher.js";
import { Scheduler } from "../scheduler/scheduler.js";
import type { LoomServerOptions } from "./serverOptions.js";
import type { ServerBackend } from "./serverBackend.js";
import type { ServerConfig } from "./serverConfig.js";
import type { ServerEngine } from "./serverEngine.js";
import type { ServerProviders } from "./serverProviders.js";
import type { ServerReactors } from "./serverReactors.js";
import type { StateDir } from "./stateDir.js";

/** The application: the operations transports are given, and what runs on them (workflows, timers). */
export interface ServerApp {
  /** What transports hold: the bound operations, no engine object. */
  readonly app: App;
  /** Title regeneration turns in flight (t3_thread_update regenerate_title). */
  readonly titles: TitleRegenerations;
  readonly workflows: WorkflowRunner;
  /** Fires timed scheduled tasks. */
  readonly scheduler: Scheduler;
  readonly pullRequests: PullRequestWatcher;
  /** Resumes work a usage limit stopped once the limit resets. */
  readonly limitResumes: LimitResumer;
  readonly backgroundSettles: BackgroundSettler;
  /** The webhook deliveries taken on this state dir, so a replay is refused (docs/schedules.md). */
  readonly webhookDeliveries: SqliteWebhookDeliveries;
}

/**
 * The app's context over the engine, providers and this environment's
 * settings, bound into the operations every transport and the scheduler
 * use; title regenerations a restart cut short are completed here.
 * `baseUrl` is read when a webhook URL is handed out, by then the server's.
 */
export async function buildApp(dir: StateDir, options: LoomServerOptions, parts: AppParts, baseUrl: () => string): Promise<ServerApp> {
  const { setup, base, engine, providers, reactors } = parts;
  const { config, registry, log, drivers } = setup;
  const { sessions, pools } = providers;
  const titles = new TitleRegenerations(config.titles, log);
  // Beside the webhook keys: a node that can verify a delivery sees every delivery taken on this state dir.
  const webhookDeliveries = SqliteWebhookDeliveries.open(join(dir.root, "webhook-deliveries.db"));
  const ctx: AppContext = {
    orchestrator: engine.orchestrator,
    registry,
    environmentId: base.environmentId,
    projects: config.projects,
    scratchRoot: join(dir.root, "scratch"),
    maxWaitMs: config.waits.maxWaitMs,
    progressIntervalMs: options.progressIntervalMs ?? 5_000,
    clock: options.clock ?? Date.now,
    nodeId: base.nodeId,
    search: reactors.search,
    secrets: { vault: providers.secrets, isSessionLive: (providerSessionId) => sessions.isSessionLive(providerSessionId) },
    titles,
    workspaces: engine.workspaces,
    heldSessions: () => sessions.held().map((s) => ({ providerSessionId: s.providerSessionId, lastActivityAt: s.lastActivityAt, resumed: s.resumed, fromPool: s.fromPool })),
    warmSessions: () => pools.held(),
    providerCatalog: {
      stateDir: dir.root,
      configPath: options.configPath === undefined ? resolve(dir.root, DEFAULT_CONFIG_FILE) : resolve(setup.cwd, options.configPath),
      ...(options.acpRegistry === undefined ? {} : { registry: options.acpRegistry }),
      driver: drivers.get("acp")!,
      // A prepared instance is this server's at once; other nodes sharing the log read it on restart.
      onPrepared: (instance) => registry.register(instance),
    },
    schedules: {
      keys: new FileWebhookKeyStore(join(dir.root, "webhook-keys.json")),
      baseUrl,
      minIntervalMs: config.scheduler.minIntervalMs,
      timeZone: schedulerTimeZone(config.scheduler.timeZone),
      webhookMaxBodyBytes: config.scheduler.webhookMaxBodyBytes,
      deliveries: webhookDeliveries,
      webhookToleranceMs: config.scheduler.webhookToleranceMs,
    },
    guestShares: { key: new GuestShareKey(join(dir.root, "guest-share.key")), baseUrl, attachmentsDir: join(dir.root, "guest-attachments") },
  };
  shareLimitWindows(ctx, log);
  const workflows = new WorkflowRunner(ctx, { log, maxConcurrentAgents: config.workflows.maxConcurrentAgents });
  const app = bindApp(ctx, workflows);
  const timers = options.schedulerTimers === undefined ? {} : { timers: options.schedulerTimers };
  const scheduler = new Scheduler({ app, log, ...timers });
  const pullRequests = new PullRequestWatcher({ app, log, ...timers });
  const limitResumes = new LimitResumer({ app, log, ...timers });
  const backgroundSettles = new BackgroundSettler({ app, log, ...timers });
  const titlesReconciled = await reconcileTitleRegenerations(ctx);
  if (titlesReconciled > 0) log(`loom: reconciled after restart: ${titlesReconciled} title regeneration(s) completed with the first-line title`);
  return { app, titles, workflows, scheduler, pullRequests, limitResumes, backgroundSettles, webhookDeliveries };
}

/** The steps before the app that it is built on. */
export interface AppParts {
  readonly setup: ServerConfig;
  readonly base: ServerBackend;
  readonly engine: ServerEngine;
  readonly providers: ServerProviders;
  readonly reactors: ServerReactors;
}
