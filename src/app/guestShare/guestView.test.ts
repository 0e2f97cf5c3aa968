import { describe, expect, it } from "vitest";
import { SNAPSHOT_ROW_LIMIT, SNAPSHOT_USER_TURN_LIMIT } from "../../contracts/entities/guestShares.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { aThread, existing } from "../../core/testing/fixtures.js";
import { aUserMessage, anItem, itemEvent } from "../../core/testing/runFixtures.js";
import { fold } from "../../core/testing/scenario.js";
import { stateTimeline } from "../../engine/timeline.js";
import { guestRows } from "./guestView.js";

const A = "thread:a";

/** A timeline of `turns` user turns, each a user message and `replies` assistant messages. */
function timeline(turns: number, replies: number, extra: (position: number) => TurnItem[] = () => []) {
  const items: TurnItem[] = [];
  for (let turn = 0; turn < turns; turn += 1) {
    items.push(aUserMessage(A, null, items.length, `item:${items.length}`, `message:${turn}`, `question ${turn}`));
    for (let reply = 0; reply < replies; reply += 1) {
      items.push(anItem(A, null, items.length, `item:${items.length}`, { type: "assistant_message", messageId: `reply:${turn}:${reply}`, text: `answer ${turn}.${reply}`, streaming: false, createdBy: "agent", creationSource: "provider" }));
    }
    items.push(...extra(items.length));
  }
  return stateTimeline(fold(existing(aThread({ id: A })), ...items.map(itemEvent)));
}

describe("the guest's rows", () => {
  it("keep exactly 20 user turns and leave out the 21st whole", () => {
    const at = guestRows(timeline(SNAPSHOT_USER_TURN_LIMIT, 1), A);
    expect(at.truncated).toBe(false);
    expect(at.rows.filter((row) => row.kind === "user")).toHaveLength(20);
    const over = guestRows(timeline(SNAPSHOT_USER_TURN_LIMIT + 1, 1), A);
    expect(over.truncated).toBe(true);
    expect(over.rows).toHaveLength(40);
    expect(over.rows[0]).toMatchObject({ kind: "user", text: "question 1" });
  });

  it("keep at most 600 rows, the newest", () => {
    const at = guestRows(timeline(1, SNAPSHOT_ROW_LIMIT - 1), A);
    expect(at.truncated).toBe(false);
    expect(at.rows).toHaveLength(600);
    const over = guestRows(timeline(1, SNAPSHOT_ROW_LIMIT), A);
    expect(over.truncated).toBe(true);
    expect(over.rows).toHaveLength(600);
    expect(over.rows.at(-1)?.text).toBe(`answer 0.${SNAPSHOT_ROW_LIMIT - 1}`);
    expect(over.rows[0]?.text).toBe("answer 0.0");
  });

  it("show a tool call's kind and a file change's paths only, and no secret request or reasoning at all", () => {
    const rows = guestRows(
      timeline(1, 0, (position) => [
        anItem(A, null, position, "item:cmd", { type: "command_execution", command: "curl -H 'token: s3cr3t'", cwd: "/w", status: "completed", exitCode: 0, durationMs: 5, outputPreview: "s3cr3t", outputTruncated: false, outputStreamId: null }),
        anItem(A, null, position + 1, "item:files", { type: "file_change", changes: [{ path: "src/a.ts", kind: "modified", diff: "+s3cr3t", additions: 1, deletions: 0 }], status: "completed" }),
        anItem(A, null, position + 2, "item:secret", { type: "secret_request", secretName: "API key", envVarName: "API_KEY", description: "s3cr3t", status: "pending" }),
        anItem(A, null, position + 3, "item:reasoning", { type: "reasoning", summary: "s3cr3t", text: "s3cr3t", encryptedContentPresent: false }),
        anItem(A, null, position + 4, "item:tool", { type: "dynamic_tool", toolName: "lookup", arguments: { key: "s3cr3t" }, result: "s3cr3t", status: "completed" }),
      ]),
      A,
    ).rows;
    expect(JSON.stringify(rows)).not.toContain("s3cr3t");
    expect(rows.map((row) => [row.kind, row.text, row.paths])).toEqual([
      ["user", "question 0", []],
      ["activity", "Ran a command (completed)", []],
      ["files", "Changed files", ["src/a.ts"]],
      ["activity", "Used the tool lookup", []],
    ]);
  });
});
