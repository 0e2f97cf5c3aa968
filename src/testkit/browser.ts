import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Browser, type ConsoleMessage, type Page, chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type FileContents, initRepo } from "./gitRepo.js";
import { CLI_PATH, type ServeProcess, spawnServe, waitForExit } from "./loomProcess.js";

/**
 * Browser tests of the web UI (docs/ui.md): Debian's chromium driven by
 * playwright-core, against a real `loom serve` process (built dist/) whose
 * agents are the scripted driver.
 */

/** Debian's chromium (.ci/run installs it). */
export const CHROMIUM_PATH = process.env.LOOM_CHROMIUM ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no chromium at ${CHROMIUM_PATH}: install it with apt-get install chromium (or set LOOM_CHROMIUM)`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}

/** Where screenshots go: docs/ui/ when LOOM_UI_SCREENSHOTS=1 (to refresh docs/ui.md), else a temp dir. */
export function screenshotDir(): string {
  if (process.env.LOOM_UI_SCREENSHOTS === "1") return fileURLToPath(new URL("../../docs/ui/", import.meta.url));
  return mkdtempSync(join(tmpdir(), "loom-ui-shots-"));
}

/** Console errors and uncaught exceptions of a page, as text. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message: ConsoleMessage) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

/** How ServedLoom.start sets up the state dir. */
export interface ServedLoomOptions {
  readonly repoFiles?: FileContents;
  readonly prepare?: (stateDir: string) => Promise<void>;
}

/** A `loom serve` process on a state dir of its own, restartable on the same port. */
export class ServedLoom {
  private constructor(
    readonly stateDir: string,
    readonly projectDir: string,
    private serve: ServeProcess,
  ) {}

  /**
   * With `repoFiles`, the project is a git repository whose first commit
   * holds them; `prepare` runs on the state dir (its config written) before
   * the server starts, e.g. to write threads into its event log.
   */
  static async start(config: Record<string, unknown>, options: ServedLoomOptions = {}): Promise<ServedLoom> {
    const root = mkdtempSync(join(tmpdir(), "loom-ui-"));
    const stateDir = join(root, "state");
    const projectDir = join(root, "project");
    mkdirSync(stateDir, { recursive: true });
    mkdirSync(projectDir, { recursive: true });
    if (options.repoFiles !== undefined) initRepo(projectDir, options.repoFiles);
    const configPath = join(stateDir, "config.json");
    writeFileSync(configPath, JSON.stringify({ projects: [{ id: "demo", root: projectDir }], ...config }));
    await options.prepare?.(stateDir);
    const serve = await spawnServe(["--state-dir", stateDir, "--port", "0"]);
    return new ServedLoom(stateDir, projectDir, serve);
  }

  get url(): string {
    return this.serve.url;
  }

  get port(): string {
    return new URL(this.serve.url).port;
  }

  /** `loom open --no-browser`: the one-time login link it prints. */
  async loginUrl(): Promise<string> {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI_PATH, "open", "--no-browser", "--state-dir", this.stateDir]);
    return stdout.trim();
  }

  /** Stop the server (SIGTERM, a clean shutdown) and wait for it to exit. */
  async stop(): Promise<void> {
    const exited = waitForExit(this.serve.child);
    this.serve.child.kill("SIGTERM");
    await exited;
  }

  /** Start it again on the same port and state dir. */
  async restart(): Promise<void> {
    this.serve = await spawnServe(["--state-dir", this.stateDir, "--port", this.port]);
  }

  stderr(): string {
    return this.serve.stderr();
  }
}

/** How long a browser test waits for the page to show something. */
/** For afterEach: a failed test prints what the page showed and the server's log. */
export async function reportFailedPage(failed: boolean, page: Page, serverLog: () => string): Promise<void> {
  if (!failed) return;
  const text = await page.locator("main").innerText({ timeout: 1_000 }).catch(() => "(no main)");
  console.error(`page at ${page.url()}:\n${text}\nserver log:\n${serverLog()}`);
}

export const UI_WAIT = 20_000;

/** The thread id of the thread page the browser shows. */
export function threadIdOfPage(page: Page): string {
  const match = /\/t\/(.+)$/.exec(new URL(page.url()).pathname);
  if (match === null) throw new Error(`not on a thread page: ${page.url()}`);
  return decodeURIComponent(match[1]!);
}

/** Launch a thread from the new-thread dialog and wait until its page shows; its id. */
export async function launchFromUi(page: Page, message: string, options: { title?: string; provider?: string } = {}): Promise<string> {
  const before = page.url();
  await page.getByRole("button", { name: "New thread" }).click();
  const dialog = page.getByRole("dialog", { name: "New thread" });
  await dialog.waitFor();
  if (options.provider !== undefined) await dialog.getByLabel("Provider").selectOption(options.provider);
  if (options.title !== undefined) await dialog.getByLabel("Title").fill(options.title);
  await dialog.getByLabel("First message").fill(message);
  await dialog.getByRole("button", { name: "Launch" }).click();
  // The new thread's page: launched from another thread's page, the address must change first.
  await page.waitForURL((url) => url.href !== before && url.pathname.startsWith("/t/"), { timeout: UI_WAIT });
  await page.locator(".thread-head h2").waitFor();
  return threadIdOfPage(page);
}

/** The timeline items of a kind, optionally only those showing a text. */
export function timelineItems(page: Page, kind: string, text?: string) {
  const locator = page.locator(`.timeline [data-kind="${kind}"]`);
  return text === undefined ? locator : locator.filter({ hasText: text });
}

/** Sign the page in with a one-time link from `loom open`, and wait for the inbox. */
export async function signIn(page: Page, loom: ServedLoom): Promise<void> {
  await page.goto(await loom.loginUrl());
  await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: UI_WAIT });
}

/** What `signedInPage` opens: the server, its browser and the one page. */
export interface SignedInPage {
  readonly loom: ServedLoom;
  readonly browser: Browser;
  readonly page: Page;
  /** Console errors and page errors seen so far. */
  readonly errors: string[];
}

/**
 * Registers the hooks of a browser test file: before its tests, a real `loom
 * serve` started with `config` (ServedLoom.start), chromium, and one light
 * page signed in (1280×800 unless `viewport` says otherwise); after each failed test, the page and the server
 * log reported; after the file, both closed. The fields are set once the
 * file's first beforeAll ran.
 */
export function signedInPage(config: Record<string, unknown>, options: ServedLoomOptions = {}, viewport: { readonly width: number; readonly height: number } = { width: 1440, height: 900 }): SignedInPage {
  const opened: { -readonly [K in keyof SignedInPage]?: SignedInPage[K] } = {};
  beforeAll(async () => {
    opened.loom = await ServedLoom.start(config, options);
    opened.browser = await launchChromium();
    const context = await opened.browser.newContext({ viewport, colorScheme: "light" });
    opened.page = await context.newPage();
    opened.errors = collectPageErrors(opened.page);
    await signIn(opened.page, opened.loom);
  }, 60_000);
  afterAll(async () => {
    await opened.browser?.close();
    await opened.loom?.stop();
  });
  afterEach((ctx) => reportFailedPage(ctx.task.result?.state === "fail", opened.page!, () => opened.loom!.stderr()));
  return opened as SignedInPage;
}
