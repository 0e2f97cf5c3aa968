/**
 * `npm run bench`: every figure is printed next to a baseline measured in the
 * same run, as a ratio. LOOM_BENCH_QUICK=1 runs smaller sizes;
 * LOOM_BENCH_ONLY=core,mcp runs only the named benchmarks.
 */
import { runAgentPoolBench } from "./agentPoolBench.js";
import { runAgentStartupBench } from "./agentStartupBench.js";
import { runBudgetBench } from "./budgetBench.js";
import { runCompressionBench } from "./compressionBench.js";
import { runCoreBench } from "./coreBench.js";
import { runCheckedMergeBench } from "./checkedMergeBench.js";
import { runMergeIntegrationBench, runMergeQueueBench } from "./mergeQueueBench.js";
import { runCheckpointBench } from "./checkpointBench.js";
import { runFanoutBench } from "./fanoutBench.js";
import { runHandoffBench } from "./handoffBench.js";
import { runMcpBench } from "./mcpBench.js";
import { runMcpTaskBench } from "./mcpTaskBench.js";
import { runMemoryBench } from "./memoryBench.js";
import { runPoolBench } from "./poolBench.js";
import { runPostgresBench } from "./postgresBench.js";
import { runPostgresNodesBench } from "./postgresNodesBench.js";
import { runCrashResumeBench } from "./crashResumeBench.js";
import { runRestartBench } from "./restartBench.js";
import { runScaleBench } from "./scaleBench.js";
import { runSearchBench } from "./searchBench.js";
import { runSimBench } from "./simBench.js";
import { runTelemetryBench } from "./telemetryBench.js";
import { runToolListBench } from "./toolListBench.js";
import { runTranscriptEventsBench } from "./transcriptEventsBench.js";
import { runSidebarBench, runUiBench } from "./uiBench.js";
import { runWireBench } from "./wireBench.js";
import { runWorkflowBench } from "./workflowBench.js";
import { runWorkspacesBench } from "./workspacesBench.js";

const quick = process.env.LOOM_BENCH_QUICK === "1";

/** Every benchmark by the name LOOM_BENCH_ONLY takes, in the order `npm run bench` runs them. */
const BENCHMARKS: Readonly<Record<string, () => Promise<void>>> = {
  core: () => runCoreBench({ threads: quick ? 5_000 : 50_000, replayEvents: quick ? 100_000 : 1_000_000 }),
  mcp: () => runMcpBench({ calls: quick ? 300 : 2_000, warmup: quick ? 50 : 200 }),
  mcpTask: async () => {
    await runMcpTaskBench({ delegations: quick ? 40 : 200, warmup: quick ? 5 : 20, childSleepMs: 0 });
    await runMcpTaskBench({ delegations: quick ? 10 : 40, warmup: quick ? 2 : 5, childSleepMs: 200 });
  },
  toolList: () => runToolListBench(),
  transcriptEvents: () => runTranscriptEventsBench({ turns: quick ? 5 : 20 }),
  fanout: async () => {
    await runFanoutBench({ sizes: [1, 4, 16], rounds: quick ? 1 : 3, checkpoints: true });
    await runFanoutBench({ sizes: [1, 4, 16], rounds: quick ? 1 : 3, checkpoints: false });
  },
  pool: () => runPoolBench({ sizes: [1, 4], rounds: quick ? 1 : 3 }),
  postgres: () => runPostgresBench({ threads: quick ? 2_000 : 10_000, rawInserts: quick ? 2_000 : 10_000 }),
  postgresNodes: () => runPostgresNodesBench({ threads: quick ? 2_000 : 10_000, rounds: quick ? 1 : 3 }),
  crashResume: () => runCrashResumeBench({ children: quick ? 4 : 8 }),
  handoff: () => runHandoffBench({ runs: 1_000, repeat: quick ? 50 : 300 }),
  search: () => runSearchBench({ items: quick ? 20_000 : 100_000, calls: quick ? 200 : 1_000 }),
  workspaces: () => runWorkspacesBench({ files: quick ? 2_000 : 10_000, changed: 10, captureRounds: quick ? 5 : 31, worktreeRounds: quick ? 2 : 7 }),
  checkedMerge: async () => {
    // The cheapest check a project could have, then one of half a second's work (a small test suite).
    for (const check of ["node -e 0", `node -e "const t = Date.now(); while (Date.now() - t < 500);"`]) {
      await runCheckedMergeBench({ files: quick ? 2_000 : 10_000, children: quick ? 8 : 16, overlapping: quick ? 2 : 4, check });
    }
  },
  mergeQueue: async () => {
    for (const check of ["node -e 0", `node -e "const t = Date.now(); while (Date.now() - t < 500);"`]) {
      await runMergeQueueBench({ children: quick ? 8 : 16, overlapping: quick ? 2 : 4, check });
    }
  },
  mergeIntegration: () => runMergeIntegrationBench({ children: quick ? 8 : 16, overlapping: quick ? 4 : 8 }),
  scale: () => runScaleBench({ small: 1_000, large: quick ? 20_000 : 100_000, calls: quick ? 100 : 400, warmup: quick ? 20 : 50 }),
  agentStartup: () => runAgentStartupBench(),
  agentPool: () => runAgentPoolBench({ sizes: [1, 4], rounds: quick ? 1 : 3 }),
  wire: () => runWireBench({ transcriptRepeats: quick ? 3 : 10, commits: quick ? 200 : 1_000, clients: 100, warmup: quick ? 20 : 100 }),
  compression: () => runCompressionBench({ transcriptRepeats: quick ? 3 : 10, uiLines: 300, rounds: quick ? 1 : 3 }),
  ui: async () => {
    await runUiBench({ items: 5_000, rounds: quick ? 3 : 10 });
    await runSidebarBench({ small: 100, large: 10_000, rounds: quick ? 3 : 10 });
  },
  checkpoint: () => runCheckpointBench({ commits: quick ? 20_000 : 100_000 }),
  restart: () => runRestartBench({ events: quick ? 100_000 : 1_000_000, tail: quick ? 5_000 : 50_000 }),
  memory: () => runMemoryBench({ threads: quick ? 2_000 : 10_000 }),
  workflow: () => runWorkflowBench({ rounds: quick ? 1 : 3, journalCalls: 200 }),
  budget: () => runBudgetBench({ history: quick ? 3 : 5, measured: quick ? 5 : 15, children: 16, rounds: quick ? 3 : 7 }),
  telemetry: () => runTelemetryBench({ threads: quick ? 2_000 : 10_000, rounds: quick ? 1 : 3, fanoutRounds: quick ? 1 : 5, children: 16 }),
  sim: () => runSimBench({ seeds: quick ? 30 : 200, starts: quick ? [1, 1001] : [1, 1001, 2001, 3001, 4001], budget: quick ? 200 : 1000 }),
};

function selected(): string[] {
  const only = process.env.LOOM_BENCH_ONLY;
  if (only === undefined || only.trim() === "") return Object.keys(BENCHMARKS);
  const names = only.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !Object.hasOwn(BENCHMARKS, name));
  if (unknown.length > 0) throw new Error(`LOOM_BENCH_ONLY names unknown benchmarks: ${unknown.join(", ")}; known: ${Object.keys(BENCHMARKS).join(", ")}`);
  return names;
}

async function main(): Promise<void> {
  const names = selected();
  console.log(`loom benchmarks (node ${process.version}${quick ? ", quick sizes" : ""}): ${names.join(", ")}`);
  for (const name of names) await BENCHMARKS[name]!();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
