import { describe, expect, it } from "vitest";
import type { TurnItem } from "../contracts/turnItems.js";
import { aProviderThread, aRun, anItem } from "../core/testing/runFixtures.js";
import { resumeBrief } from "./resumeBrief.js";
import type { Timeline } from "./timeline.js";

const thread = aProviderThread("thread:a");
const RESUMED_AT = "2026-03-01T12:00:00.000Z";

function timelineOf(items: readonly TurnItem[]): Timeline {
  return { items: (threadId: string) => items.filter((item) => item.threadId === threadId) } as unknown as Timeline;
}

const command = (id: string, runId: string, text: string, status: "completed" | "failed", exitCode: number | null) =>
  anItem(thread.id, runId, 1, id, { type: "command_execution", command: text, cwd: "/w", status, exitCode, durationMs: 5, outputPreview: "", outputTruncated: false, outputStreamId: null });

describe("the brief of a run resumed after a crash", () => {
  it("is null for a run never resumed", () => {
    expect(resumeBrief(timelineOf([]), aRun(thread, { id: "run:a" }))).toBeNull();
  });

  it("names the resume, the calls recorded as running (escaped) and the calls this run had finished, not another run's", () => {
    const run = aRun(thread, {
      id: "run:a",
      status: "starting",
      resumes: [{ at: RESUMED_AT, reason: "node_lost", lostAttemptOrdinal: 1, unfinished: ["command: cat <a> && rm b"] }],
    });
    const items = [
      command("turn-item:1", "run:a", "npm ci", "completed", 0),
      command("turn-item:2", "run:a", "npm test", "failed", 1),
      command("turn-item:3", "run:other", "git push", "completed", 0),
      anItem(thread.id, "run:a", 4, "turn-item:4", { type: "file_change", changes: [{ path: "src/a.ts", kind: "modified", diff: null, additions: 1, deletions: 0 }], status: "completed" }),
    ];
    const brief = resumeBrief(timelineOf(items), run)!;
    expect(brief.split("\n")[0]).toBe('<crash_resume reason="node_lost" attempt="2">');
    expect(brief).toContain("the Loom node running it was lost");
    expect(brief).toContain("may be half done");
    expect(brief).toContain("These were recorded as still running:\n- command: cat &lt;a&gt; &amp;&amp; rm b");
    expect(brief).toContain("Finished before the cut-off:\n- command: npm ci (exit 0)\n- file change: src/a.ts");
    expect(brief).not.toContain("git push");
    expect(brief).not.toContain("npm test");
    expect(brief.endsWith("</crash_resume>")).toBe(true);
  });

  it("speaks of the latest resume only, after a restart", () => {
    const run = aRun(thread, {
      id: "run:a",
      status: "starting",
      resumes: [
        { at: RESUMED_AT, reason: "node_lost", lostAttemptOrdinal: 1, unfinished: [] },
        { at: RESUMED_AT, reason: "server_restarted", lostAttemptOrdinal: 2, unfinished: [] },
      ],
    });
    const brief = resumeBrief(timelineOf([]), run)!;
    expect(brief.split("\n")[0]).toBe('<crash_resume reason="server_restarted" attempt="3">');
    expect(brief).toContain("because Loom restarted");
    expect(brief).not.toContain("These were recorded");
    expect(brief).not.toContain("Finished before");
  });
});
