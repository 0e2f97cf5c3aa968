import { execFile } from "node:child_process";
import { CLI_PATH } from "./loomProcess.js";

/** How a run of the built `loom` CLI ended. */
export interface Ran {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The test process's environment without LOOM_STATE_DIR, so every run names its own state dir. */
export function cliEnv(): NodeJS.ProcessEnv {
  const { LOOM_STATE_DIR: _ignored, ...rest } = process.env;
  return rest;
}

/** Run the built `loom` CLI to its end (60 s at most): exit status, stdout, stderr. */
export function runLoom(args: readonly string[], env: NodeJS.ProcessEnv = cliEnv()): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });
}
