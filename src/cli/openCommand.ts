import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { UI_LOGIN_LINK_PATH } from "../api/uiRoutes.js";
import { readServerInfo, resolveStateDir, stateDirPaths } from "../server/stateDir.js";
import { ServerNotRunningError } from "./errors.js";

export const OPEN_USAGE = `  loom open [--state-dir DIR] [--no-browser]`;

/**
 * `loom open`: a one-time login link for the web UI of the running server
 * (docs/ui.md). It prints the link and, when a desktop is at hand and
 * --no-browser is not given, opens it. The link signs one browser in once
 * and expires after five minutes.
 */
export async function runOpen(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { "state-dir": { type: "string" }, "no-browser": { type: "boolean" } },
    strict: true,
  });
  const dir = stateDirPaths(resolveStateDir(values["state-dir"]));
  const info = readServerInfo(dir);
  if (info === null) throw new ServerNotRunningError(dir.root);
  if (!existsSync(dir.ownerTokenPath)) throw new Error(`the server is running but ${dir.ownerTokenPath} is missing`);
  const token = readFileSync(dir.ownerTokenPath, "utf8").trim();
  let res: Response;
  try {
    res = await fetch(`${info.url}${UI_LOGIN_LINK_PATH}`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  } catch (error) {
    throw new ServerNotRunningError(dir.root, `${info.url} did not answer: ${(error as Error).message}`);
  }
  const body = (await res.json()) as { url?: unknown; error?: { message?: string } };
  if (res.status !== 200 || typeof body.url !== "string") throw new Error(`the server refused a login link (HTTP ${res.status}): ${body.error?.message ?? "no message"}`);
  process.stdout.write(`${body.url}\n`);
  if (values["no-browser"] !== true) openInBrowser(body.url);
  return 0;
}

/** Best effort: the desktop's opener, when there is one; the printed link is the contract. */
function openInBrowser(url: string): void {
  const opener =
    process.platform === "darwin" ? ["open", url] : process.platform === "win32" ? ["cmd", "/c", "start", "", url] : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? ["xdg-open", url] : null;
  if (opener === null) return;
  const child = spawn(opener[0]!, opener.slice(1), { stdio: "ignore", detached: true });
  child.on("error", () => undefined);
  child.unref();
}
