/**
 * `npm run bench`: every figure is printed next to a baseline measured in the
 * same run, as a ratio. LOOM_BENCH_QUICK=1 runs smaller sizes.
 */
import { runAgentStartupBench } from "./agentStartupBench.js";
import { runCoreBench } from "./coreBench.js";
import { runFanoutBench } from "./fanoutBench.js";
import { runHandoffBench } from "./handoffBench.js";
import { runMcpBench } from "./mcpBench.js";
import { runPostgresBench } from "./postgresBench.js";
import { runSearchBench } from "./searchBench.js";
import { runWorkspacesBench } from "./workspacesBench.js";
import { runScaleBench } from "./scaleBench.js";
import { runWireBench } from "./wireBench.js";

const quick = process.env.LOOM_BENCH_QUICK === "1";

async function main(): Promise<void> {
  console.log(`loom benchmarks (node ${process.version}${quick ? ", quick sizes" : ""})`);
  await runCoreBench({ threads: quick ? 5_000 : 50_000, replayEvents: quick ? 100_000 : 1_000_000 });
  await runMcpBench({ calls: quick ? 300 : 2_000, warmup: quick ? 50 : 200 });
  await runFanoutBench({ sizes: [1, 4, 16], rounds: quick ? 1 : 3 });
  await runPostgresBench({ threads: quick ? 2_000 : 10_000, rawInserts: quick ? 2_000 : 10_000 });
  await runHandoffBench({ runs: 1_000, repeat: quick ? 50 : 300 });
  await runSearchBench({ items: quick ? 20_000 : 100_000, calls: quick ? 200 : 1_000 });
  await runWorkspacesBench({ files: quick ? 2_000 : 10_000, changed: 10, captureRounds: quick ? 5 : 31, worktreeRounds: quick ? 2 : 7 });
  await runScaleBench({ small: 1_000, large: quick ? 20_000 : 100_000, calls: quick ? 100 : 400, warmup: quick ? 20 : 50 });
  await runAgentStartupBench();
  await runWireBench({ transcriptRepeats: quick ? 3 : 10, commits: quick ? 200 : 1_000, clients: 100, warmup: quick ? 20 : 100 });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
