import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built CLI entry; tests that spawn processes run after `npm run build`. */
export const CLI_PATH = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
/** The test processes `npm run build` compiles beside the package, not into it (tsconfig.testkit.json). */
export const DIST_TESTKIT = fileURLToPath(new URL("../../dist-test/testkit/", import.meta.url));

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stderr: () => string;
}

/** Spawn `loom serve` (this build's, or the CLI at `options.cliPath`) and resolve once it prints its address line. */
export function spawnServe(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  options: { readonly cliPath?: string; readonly cwd?: string } = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [options.cliPath ?? CLI_PATH, "serve", ...args], { env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    let stdout = "";
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n")[0];
      if (stdout.includes("\n") && line) {
        child.stdout.off("data", onData);
        try {
          resolve({ child, url: (JSON.parse(line) as { url: string }).url, stderr: () => stderr });
        } catch (error) {
          reject(new Error(`unexpected serve output: ${line}`, { cause: error }));
        }
      }
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => reject(new Error(`loom serve exited early (${code}): ${stderr}`)));
  });
}

export function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** Whether `pid` is running: not gone, nor a zombie waiting to be reaped (an orphan's reaper may be slow, or absent in a container). */
export function processAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") !== true;
  } catch {
    return false;
  }
}
