import { spawn } from "node:child_process";
import { join } from "node:path";
import { DIST_TESTKIT } from "./loomProcess.js";

/** A job for storeWriter.ts (see there). */
export interface StoreWriterJob {
  readonly backend: "sqlite" | "postgres";
  readonly file?: string;
  readonly url?: string;
  readonly schema?: string;
  readonly commits: number;
  readonly eventsPerCommit: number;
  readonly label: string;
}

/**
 * Run one writer process per job at once (built storeWriter.js: tests that
 * use it run after `npm run build`). Resolves with each writer's last
 * sequence; rejects with its stderr if one fails.
 */
export function runStoreWriters(jobs: readonly StoreWriterJob[]): Promise<number[]> {
  return Promise.all(
    jobs.map(
      (job) =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, [join(DIST_TESTKIT, "storeWriter.js")], {
            env: { ...process.env, LOOM_STORE_WRITER: JSON.stringify(job) },
            stdio: ["ignore", "pipe", "pipe"],
          });
          let stdout = "";
          let stderr = "";
          child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
          child.once("error", reject);
          child.once("exit", (code) => {
            const done = /^done (\d+)$/m.exec(stdout);
            if (code === 0 && done !== null) resolve(Number(done[1]));
            else reject(new Error(`store writer ${job.label} exited with ${String(code)}: ${stderr || stdout}`));
          });
        }),
    ),
  );
}
