import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * The real @cursor/sdk local agent under Loom. Cursor's agent runs its model
 * on Cursor's backend, so this runs only with CURSOR_API_KEY set (and
 * network); otherwise it is reported as skipped with the reason. The model
 * is not scripted: the prompt asks it to call Loom's t3_thread_list, and
 * the test reads the call and the run's end from Loom's state.
 */

const KEY = process.env.CURSOR_API_KEY ?? "";
const [MAJOR = 0, MINOR = 0] = process.versions.node.split(".").map(Number);
const NODE_OK = MAJOR > 22 || (MAJOR === 22 && MINOR >= 13);
const SKIP_REASON =
  KEY === ""
    ? "CURSOR_API_KEY is not set: Cursor's agent needs Cursor's backend and cannot run offline"
    : `the Cursor SDK needs Node 22.13 or newer; this is Node ${process.versions.node}`;
const RUNS = KEY !== "" && NODE_OK;
const TURN_MS = 180_000;
let harness: LoomHarness | null = null;

beforeEach(async () => {
  if (!RUNS) return;
  harness = await LoomHarness.start({ config: { providers: [{ id: "cursor", driver: "cursor" }] } });
});

afterEach(async () => {
  await harness?.close();
  harness = null;
});

describe("cursor driver end to end (needs CURSOR_API_KEY)", () => {
  it(
    "a Cursor agent calls Loom's t3_thread_list through the injected MCP server",
    async (context) => {
      if (!RUNS) {
        // vitest's reporters do not show a skip note, so the reason is printed as well.
        console.warn(`SKIPPED: ${SKIP_REASON}`);
        context.skip(SKIP_REASON);
      }
      const loom = harness!;
      const launched = await loom.launch({ message: "Call the t3_thread_list tool of the t3-code MCP server once, then reply with the number of threads it reports.", title: "cursor e2e", target: { providerInstanceId: "cursor" } });
      const run = await loom.waitForEnd(launched.runId!, TURN_MS);
      const items = loom.items(launched.threadId);
      expect(run.status, JSON.stringify(items, null, 2)).toBe("completed");
      expect(items.some((item) => item.type === "dynamic_tool" && item.toolName.endsWith("t3_thread_list"))).toBe(true);
    },
    TURN_MS + 30_000,
  );
});
