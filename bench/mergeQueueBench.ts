import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { TEST_GIT_ENV, gitSync, initRepo, tempDir } from "../src/testkit/gitRepo.js";
import { script } from "../src/testkit/loomHarness.js";
import { isOpenMergeStatus } from "../src/contracts/entities/mergeQueue.js";
import { commitWorktreeChanges } from "../src/workspaces/commitChanges.js";
import { now, percentile, printTable, seconds } from "./stats.js";

/**
 * The merge queue's cost per merge (docs/workspaces.md, "The merge queue"):
 * a real in-process server, `children` worktree children of a parent each
 * writing one file (`overlapping` of them the same line of one file, so all
 * but the first conflict), then merged one at a time through
 * merge-into-parent (queued, the entry begun, merged with the check in the
 * scratch worktree, recorded, answered) against the bare way on a clone of
 * the same branches: `git merge --no-edit`, then the same check (`git merge
 * --abort` on a conflict). Each child's two merges run back to back, order
 * alternating; the ratio is the median of the per-merge ratios. Goal ≤ 1.2×.
 */

const run = promisify(execFile);

export interface MergeQueueBenchOptions {
  readonly children: number;
  readonly overlapping: number;
  readonly check: string;
}

export async function runMergeQueueBench(options: MergeQueueBenchOptions): Promise<void> {
  const dir = tempDir("bench-merge-queue");
  try {
    const repo = join(dir.path, "repo");
    initRepo(repo, { "shared.txt": "the shared line\n", "README.md": "bench\n" });
    const stateDir = join(dir.path, "state");
    writeFileSync(join(dir.path, "config.json"), JSON.stringify({ projects: [{ id: "repo", root: repo, checkCommand: options.check }] }));
    const server = await startLoomServer({ stateDir, cwd: dir.path, configPath: join(dir.path, "config.json") });
    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    const client = await LoomMcpClient.connect(server.mcpUrl, token, "loom-bench");
    try {
      const delegations = Array.from({ length: options.children }, (_, i) => {
        const path = i < options.overlapping ? "shared.txt" : `child${i}.txt`;
        const content = i < options.overlapping ? `the shared line, as child ${i} wrote it\n` : `child ${i}\n`;
        return { call: "delegate_task", args: { task: script({ write: { path, content } }, { say: "done" }), title: `Child ${i}`, isolation: "worktree", clientRequestId: `c${i}` } };
      });
      const parent = await client.ok<{ threadId: string }>("t3_thread_launch", { projectId: "repo", title: "Bench parent", message: script(...delegations, { say: "delegated" }) });
      const state = () => server.orchestrator.state;
      const children = await until(() => {
        const kids = [...state().threads.values()].filter((thread) => thread.lineage.parentThreadId === parent.threadId);
        const runs = [...state().runs.values()];
        const idle = (id: string) => runs.filter((r) => r.threadId === id).every((r) => r.endedAt !== null) && runs.some((r) => r.threadId === id);
        return kids.length === options.children && kids.every((kid) => idle(kid.id)) && idle(parent.threadId) ? kids : null;
      });
      // Both ways merge commits: the children's work is committed on their branches first.
      for (const child of children) await commitWorktreeChanges({ worktreePath: child.worktreePath!, message: `child ${child.title}` });
      await until(() => ([...state().runs.values()].filter((r) => r.threadId === parent.threadId).every((r) => r.endedAt !== null) ? true : null));
      const copy = join(dir.path, "copy");
      await run("git", ["clone", "-q", repo, copy], { env: TEST_GIT_ENV });

      const ours: number[] = [];
      const bare: number[] = [];
      let oursMerged = 0;
      let bareMerged = 0;
      for (const [i, child] of children.entries()) {
        const measureOurs = async () => {
          const start = now();
          const res = await fetch(`${server.url}/api/orchestration/threads/${encodeURIComponent(child.id)}/merge-into-parent`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: "{}",
          });
          await res.json();
          ours.push(seconds(start) * 1000);
          if (res.status === 200) oursMerged += 1;
        };
        const measureBare = async () => {
          const start = now();
          const merged = await run("git", ["merge", "-q", "--no-edit", `origin/${child.branch!}`], { cwd: copy, env: TEST_GIT_ENV }).then(
            () => true,
            async () => {
              await run("git", ["merge", "--abort"], { cwd: copy, env: TEST_GIT_ENV });
              return false;
            },
          );
          if (merged) await run("/bin/sh", ["-c", options.check], { cwd: copy });
          bare.push(seconds(start) * 1000);
          if (merged) bareMerged += 1;
        };
        if (i % 2 === 0) await measureOurs().then(measureBare);
        else await measureBare().then(measureOurs);
      }
      const ratios = ours.map((time, i) => time / bare[i]!).sort((a, b) => a - b);
      const p50 = (times: readonly number[]) => percentile([...times].sort((a, b) => a - b), 50).toFixed(1);
      const solvable = options.children - Math.max(0, options.overlapping - 1);
      printTable(`Merge queue (${options.children} children, ${options.overlapping} overlapping, check \`${options.check}\`)`, [
        ["measure", "merged, check green", "of solvable without a resolver", "p50 ms per merge", "median paired ratio"],
        ["git merge --no-edit + check in the checkout (baseline)", String(bareMerged), `${bareMerged}/${solvable}`, p50(bare), "1.00"],
        ["merge-into-parent through the queue (HTTP, queued, checked, recorded)", String(oursMerged), `${oursMerged}/${solvable}`, p50(ours), percentile(ratios, 50).toFixed(2)],
      ]);
      if (gitSync(repo, "status", "--porcelain") !== "") throw new Error("the parent's checkout is not clean after the queue's merges");
    } finally {
      await client.close();
      await server.close();
    }
  } finally {
    dir.remove();
  }
}

export interface MergeIntegrationBenchOptions {
  readonly children: number;
  /** How many of them write the same place of one file (all but the first conflict). */
  readonly overlapping: number;
}

/** The check of every merge: no conflict marker left, the file's own lines kept. */
const INTEGRATION_CHECK = `! grep -qE '^(<<<<<<<|=======|>>>>>>>)' child-lines.txt && grep -qx shared child-lines.txt && grep -qx 'anchor 0' child-lines.txt`;

/** After the set: every child's line is in the parent's file. */
function allLinesKept(text: string, children: number): boolean {
  const lines = new Set(text.split("\n"));
  return Array.from({ length: children }, (_, i) => `line of child ${i}`).every((line) => lines.has(line));
}

/**
 * The integration set (docs/workspaces.md, "Resolver tasks"): `children`
 * worktree children each add their own line to one file, `overlapping` of
 * them at the same place of it (every such child but the first conflicts),
 * the others after a line of their own; the check of every merge asks for
 * no conflict marker, and at the end every child's line must be there. All are merged through the queue with a scripted
 * resolver that keeps both sides of a conflict (drops the marker lines).
 * The figure is the share merged with the check green and no person's edit,
 * against the bare way on a clone in the same run (`git merge` of each
 * branch in turn, then the check, `--abort` on a conflict). Goal ≥ 90%.
 */
export async function runMergeIntegrationBench(options: MergeIntegrationBenchOptions): Promise<void> {
  const dir = tempDir("bench-merge-integration");
  try {
    const repo = join(dir.path, "repo");
    // The overlapping children write after "shared"; each other child after its own anchor line, far enough apart to merge cleanly.
    const anchors = Array.from({ length: options.children }, (_, i) => `anchor ${i}\n${"-\n".repeat(3)}`).join("");
    initRepo(repo, { "child-lines.txt": `shared\n${"-\n".repeat(3)}${anchors}`, "README.md": "bench\n" });
    const check = INTEGRATION_CHECK;
    const stateDir = join(dir.path, "state");
    writeFileSync(join(dir.path, "config.json"), JSON.stringify({ projects: [{ id: "repo", root: repo, checkCommand: check }] }));
    const server = await startLoomServer({ stateDir, cwd: dir.path, configPath: join(dir.path, "config.json") });
    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    const client = await LoomMcpClient.connect(server.mcpUrl, token, "loom-bench");
    try {
      const base = readFileSync(join(repo, "child-lines.txt"), "utf8");
      const delegations = Array.from({ length: options.children }, (_, i) => {
        const after = i < options.overlapping ? "shared\n" : `anchor ${i}\n`;
        const content = base.replace(after, `${after}line of child ${i}\n`);
        return { call: "delegate_task", args: { task: script({ write: { path: "child-lines.txt", content } }, { say: "done" }), title: `Child ${i}`, isolation: "worktree", clientRequestId: `c${i}` } };
      });
      const parent = await client.ok<{ threadId: string }>("t3_thread_launch", { projectId: "repo", title: "Integration parent", message: script(...delegations, { say: "delegated" }) });
      const state = () => server.orchestrator.state;
      const idle = (id: string) => {
        const runs = [...state().runs.values()].filter((r) => r.threadId === id);
        return runs.length > 0 && runs.every((r) => r.endedAt !== null);
      };
      const children = await until(() => {
        const kids = [...state().threads.values()].filter((thread) => thread.lineage.parentThreadId === parent.threadId);
        return kids.length === options.children && kids.every((kid) => idle(kid.id)) && idle(parent.threadId) ? kids : null;
      });
      for (const child of children) await commitWorktreeChanges({ worktreePath: child.worktreePath!, message: `child ${child.title}` });
      const copy = join(dir.path, "copy");
      await run("git", ["clone", "-q", repo, copy], { env: TEST_GIT_ENV });
      let bareMerged = 0;
      for (const child of children) {
        const merged = await run("git", ["merge", "-q", "--no-edit", `origin/${child.branch!}`], { cwd: copy, env: TEST_GIT_ENV }).then(
          () => true,
          async () => {
            await run("git", ["merge", "--abort"], { cwd: copy, env: TEST_GIT_ENV });
            return false;
          },
        );
        if (merged) bareMerged += 1;
      }
      const bareGreen = await run("/bin/sh", ["-c", check], { cwd: copy }).then(
        () => allLinesKept(readFileSync(join(copy, "child-lines.txt"), "utf8"), options.children),
        () => false,
      );

      // The resolver keeps both sides: the marker lines go, every line stays.
      const resolver = { providerInstanceId: "scripted", instructions: script({ run: "sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' child-lines.txt" }, { say: "kept both sides" }) };
      const start = now();
      for (const child of children) {
        const res = await fetch(`${server.url}/api/orchestration/threads/${encodeURIComponent(child.id)}/merge-into-parent`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ onRefused: "resolver", resolver }),
        });
        await res.json();
      }
      const entries = await until(() => {
        const all = [...state().mergeQueueEntries.values()].filter((entry) => entry.parentThreadId === parent.threadId);
        return all.length === options.children && all.every((entry) => !isOpenMergeStatus(entry.status)) ? all : null;
      });
      const elapsed = seconds(start);
      const green = entries.filter((entry) => entry.status === "merged" && (entry.result?.check?.exitCode ?? 0) === 0);
      const resolved = green.filter((entry) => entry.resolution?.status === "resolved").length;
      const parentGreen = await run("/bin/sh", ["-c", check], { cwd: repo }).then(
        () => allLinesKept(readFileSync(join(repo, "child-lines.txt"), "utf8"), options.children),
        () => false,
      );
      const share = (n: number) => `${((100 * n) / options.children).toFixed(0)}%`;
      printTable(`Merge integration (${options.children} children, ${options.overlapping} overlapping one place, a scripted resolver)`, [
        ["measure", "merged, check green", "share", "through a resolver", "at the end: check green, every child's line", "s for the set"],
        ["git merge --no-edit of each branch in turn, no resolver (baseline)", String(bareMerged), share(bareMerged), "0", bareGreen ? "yes" : "no", "-"],
        ["the merge queue, onRefused resolver", String(green.length), share(green.length), String(resolved), parentGreen ? "yes" : "no", elapsed.toFixed(1)],
      ]);
      if (gitSync(repo, "status", "--porcelain") !== "") throw new Error("the parent's checkout is not clean after the integration set");
    } finally {
      await client.close();
      await server.close();
    }
  } finally {
    dir.remove();
  }
}

/** The probe's value once it has one; the bench's setup waits on state, not on time. */
async function until<T>(probe: () => T | null): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const value = probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error("the merge queue bench's setup did not finish");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
