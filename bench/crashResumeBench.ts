import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DelegateTaskResult } from "../src/contracts/tools/toolOutputs.js";
import { pollUntil } from "../src/testkit/poll.js";
import { ServeRig } from "../src/testkit/serveRig.js";
import { fmt, printTable } from "./stats.js";

/**
 * The kill -9 probe of work after a crash (docs/runs.md, "Work after a
 * crash"): a parent on the built `loom serve` delegates `children` scripted
 * children, each inside a shell command when the server gets SIGKILL; a new
 * server starts on the same state dir. Figures, both policies in one run:
 * the share of the cut-off children whose task completes after the restart
 * (goal: 100% with onCrash resume; onCrash fail is the baseline, whose tasks
 * end interrupted), and the time from the new server's start to the last
 * task's end against the time of the same children uncrashed.
 */

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

interface Round {
  readonly completed: number;
  readonly children: number;
  /** ms from the new server's start call to every task terminal. */
  readonly afterRestartMs: number;
}

const PROVIDERS = (onCrash: "resume" | "fail") => [
  { id: "parent", driver: "scripted" },
  { id: "child", driver: "scripted", onCrash },
];

async function probe(dir: string, onCrash: "resume" | "fail", children: number, crash: boolean): Promise<Round> {
  const stateDir = join(dir, `state-${onCrash}-${crash ? "crash" : "calm"}`);
  const markers = join(dir, `markers-${onCrash}-${crash ? "crash" : "calm"}`);
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(markers, { recursive: true });
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers: PROVIDERS(onCrash), projects: [{ id: "default", root: dir }], workspaces: { checkpoints: false } }));
  const rig = new ServeRig(stateDir, "crash-resume-bench", CLI);
  try {
    const first = await rig.start();
    // Each child marks that its command started; uncut, the command ends after 1.5 s; resumed, it finds its marker and ends at once.
    const steps = Array.from({ length: children }, (_, i) => {
      const marker = join(markers, `child-${i}`);
      const task = JSON.stringify({ script: [{ run: `if [ -f ${marker} ]; then echo again; else touch ${marker}; sleep ${crash ? 60 : 1.5}; fi` }, { say: `child ${i} done` }] });
      return { call: "delegate_task", args: { task, target: { providerInstanceId: "child" } }, as: `t${i}` };
    });
    const ids = Array.from({ length: children }, (_, i) => `{{t${i}.taskId}}`).join(" ");
    const started = Date.now();
    const parent = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Probe parent",
      message: JSON.stringify({ script: [...steps, { say: ids }] }),
      target: { providerInstanceId: "parent" },
    });
    const launched = await first.client.ok<{ result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: parent.runId, timeoutMs: 60_000 });
    const taskIds = launched.result.split(" ");
    let client = first.client;
    let from = started;
    if (crash) {
      await pollUntil(
        () => Array.from({ length: children }, (_, i) => existsSync(join(markers, `child-${i}`))),
        (made) => made.every(Boolean),
        "every child inside its command",
        60_000,
      );
      first.serve.child.kill("SIGKILL");
      await new Promise((resolve) => first.serve.child.once("exit", resolve));
      from = Date.now();
      client = (await rig.start()).client;
    }
    const tasks = await pollUntil(
      () => Promise.all(taskIds.map((taskId) => client.ok<DelegateTaskResult>("task_status", { taskId }))),
      (all) => all.every((task) => task.status !== "running" && task.status !== "queued"),
      "every task to end",
      120_000,
    );
    return { completed: tasks.filter((task) => task.status === "completed").length, children, afterRestartMs: Date.now() - from };
  } finally {
    await rig.close();
  }
}

export async function runCrashResumeBench(options: { children: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-crash-resume-"));
  try {
    const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");
    const loadBefore = load();
    const calm = await probe(dir, "resume", options.children, false);
    const resumed = await probe(dir, "resume", options.children, true);
    const failed = await probe(dir, "fail", options.children, true);
    const share = (round: Round) => `${round.completed} of ${round.children} (${((100 * round.completed) / round.children).toFixed(0)}%)`;
    printTable(`Work after a crash: ${options.children} delegated children inside a command at kill -9`, [
      ["measure", "tasks completed", "ms", "ratio"],
      [`uncrashed, launch to every task's end (baseline)`, share(calm), fmt(calm.afterRestartMs), "1.00"],
      ["onCrash resume: restart to every task's end", share(resumed), fmt(resumed.afterRestartMs), (resumed.afterRestartMs / calm.afterRestartMs).toFixed(2)],
      ["onCrash fail: restart to every task's end", share(failed), fmt(failed.afterRestartMs), (failed.afterRestartMs / calm.afterRestartMs).toFixed(2)],
    ]);
    console.log(`goal 100% of resumable runs complete: ${resumed.completed === resumed.children ? "met" : "not met"}; load average before ${loadBefore}, after ${load()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
