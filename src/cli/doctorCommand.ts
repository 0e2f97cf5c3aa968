import { accessSync, constants, existsSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { loadConfig } from "../config/config.js";
import { validateProviderInstances } from "../providers/kit/validateInstances.js";
import { ProviderRegistry } from "../providers/registry.js";
import { builtInDrivers } from "../server/providerWiring.js";
import { providerLine } from "../server/providerReport.js";
import { readServerInfo, resolveStateDir, stateDirPaths } from "../server/stateDir.js";
import type { Output } from "./args.js";
import { formatJson } from "./output.js";

export const DOCTOR_USAGE = "  loom doctor [--state-dir DIR] [--config FILE] [--json]";

export const DOCTOR_HELP = `Usage:
${DOCTOR_USAGE}

Checks what loom serve needs and prints one line per check with a fix for
each problem: Node version, SQLite (better-sqlite3) and its version, the state
dir and owner token permissions, the config file and every provider
instance's options, each instance's executable and credentials (its probe),
and whether a server runs for the state dir and answers on its port.
Exit codes: 0 nothing failed (warnings allowed); 1 a check failed.
`;

export const Verdict = { ok: "ok", warn: "warn", fail: "fail" } as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

interface Check {
  readonly name: string;
  readonly verdict: Verdict;
  readonly detail: string;
  readonly fix: string | null;
}

const check = (name: string, verdict: Verdict, detail: string, fix: string | null = null): Check => ({ name, verdict, detail, fix });

function nodeCheck(): Check {
  const major = Number(process.versions.node.split(".")[0]);
  return major >= 20 ? check("node", "ok", `Node ${process.versions.node}`) : check("node", "fail", `Node ${process.versions.node} is older than 20`, "install Node 20 or newer");
}

function sqliteCheck(): Check {
  try {
    const db = new Database(":memory:");
    const { version } = db.prepare("select sqlite_version() as version").get() as { version: string };
    db.close();
    const [major, minor] = version.split(".").map(Number);
    // RETURNING and the JSON functions the store relies on arrived by 3.35.
    if (major! < 3 || (major === 3 && minor! < 35)) return check("sqlite", "fail", `SQLite ${version} is older than 3.35`, "reinstall: npm rebuild better-sqlite3");
    return check("sqlite", "ok", `SQLite ${version} (better-sqlite3)`);
  } catch (error) {
    return check("sqlite", "fail", `better-sqlite3 does not load: ${(error as Error).message}`, "npm rebuild better-sqlite3 (needs a C++ toolchain when no prebuilt binary fits)");
  }
}

function stateDirChecks(root: string): Check[] {
  const dir = stateDirPaths(root);
  if (!existsSync(root)) return [check("state dir", "ok", `${root} does not exist yet; loom serve creates it (mode 0700)`)];
  const checks: Check[] = [];
  try {
    accessSync(root, constants.W_OK | constants.R_OK | constants.X_OK);
    const mode = statSync(root).mode & 0o777;
    checks.push(mode & 0o077 ? check("state dir", "warn", `${root} is readable by others (mode ${mode.toString(8)})`, `chmod 700 ${root}`) : check("state dir", "ok", `${root} (mode ${mode.toString(8)})`));
  } catch {
    checks.push(check("state dir", "fail", `${root} is not readable and writable by this user`, `chown -R $(id -u) ${root} && chmod 700 ${root}`));
  }
  if (existsSync(dir.ownerTokenPath)) {
    const mode = statSync(dir.ownerTokenPath).mode & 0o777;
    checks.push(mode & 0o077 ? check("owner token", "fail", `${dir.ownerTokenPath} is readable by others (mode ${mode.toString(8)})`, `chmod 600 ${dir.ownerTokenPath}`) : check("owner token", "ok", `${dir.ownerTokenPath} (mode ${mode.toString(8)})`));
  }
  return checks;
}

async function serverCheck(root: string): Promise<Check> {
  const dir = stateDirPaths(root);
  let info;
  try {
    info = readServerInfo(dir);
  } catch (error) {
    return check("server", "fail", `${dir.serverInfoPath} is unreadable: ${(error as Error).message}`, `remove ${dir.serverInfoPath} and start loom serve`);
  }
  if (info === null) return check("server", "ok", "no server running for this state dir (start one with loom serve)");
  try {
    const res = await fetch(`${info.url}/health`, { signal: AbortSignal.timeout(3_000) });
    return res.ok ? check("server", "ok", `running (pid ${info.pid}) and answering on ${info.url}`) : check("server", "fail", `${info.url}/health answered HTTP ${res.status}`, "restart loom serve");
  } catch {
    return check("server", "warn", `server.json names ${info.url} (pid ${info.pid}) but nothing answers there`, `a crashed server left it behind: start loom serve again (it rewrites ${dir.serverInfoPath})`);
  }
}

function fixFor(reason: string | null): string {
  if (reason === null) return "";
  // A registry agent that was never prepared has no executable yet: preparing installs it.
  const prepare = /`(loom providers prepare [a-z0-9-]+)`/.exec(reason);
  if (prepare !== null) return `run ${prepare[1]}`;
  if (reason.startsWith("executable not found")) return "install the agent CLI or set its executable path in the instance's options";
  if (reason.startsWith("not authenticated")) return "log in with the agent's own CLI, or set its API key variable";
  if (reason === "disabled in config") return 'set "enabled": true on the instance';
  return "see docs/configuration.md for the instance's options";
}

async function providerChecks(root: string, configPath: string | undefined): Promise<Check[]> {
  let config;
  try {
    config = loadConfig(configPath, root, process.cwd());
  } catch (error) {
    return [check("config", "fail", (error as Error).message, "fix the config file (docs/configuration.md)")];
  }
  const drivers = builtInDrivers({ stateDir: root, log: () => undefined });
  const problems = validateProviderInstances(config.providers, drivers);
  if (problems.length > 0) {
    return problems.flatMap((p) => p.errors.map((error) => check("config", "fail", `providers.${p.instanceId}: ${error}`, "loom serve refuses this config: fix or remove the instance")));
  }
  const checks = [check("config", "ok", `${config.providers.length} provider instance(s)`)];
  for (const p of await new ProviderRegistry(config.providers, drivers).list()) {
    checks.push(check(`provider ${p.instance.id}`, p.available ? "ok" : "warn", providerLine(p), p.available ? null : fixFor(p.reason)));
  }
  return checks;
}

function formatChecks(checks: readonly Check[]): string {
  const mark: Record<Verdict, string> = { ok: "ok  ", warn: "warn", fail: "FAIL" };
  return `${checks.map((c) => `${mark[c.verdict]}  ${c.name}: ${c.detail}${c.fix === null || c.fix === "" ? "" : `\n      fix: ${c.fix}`}`).join("\n")}\n`;
}

export async function runDoctor(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { "state-dir": { type: "string" }, config: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } });
  if (values.help === true) {
    out(DOCTOR_HELP);
    return 0;
  }
  const root = resolveStateDir(values["state-dir"]);
  const checks = [nodeCheck(), sqliteCheck(), ...stateDirChecks(root), ...(await providerChecks(root, values.config)), await serverCheck(root)];
  const failed = checks.some((c) => c.verdict === "fail");
  out(values.json === true ? formatJson({ ok: !failed, checks }) : formatChecks(checks));
  return failed ? 1 : 0;
}
