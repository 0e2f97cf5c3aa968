import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { LoomWsClient } from "../client/loomWsClient.js";
import type { Run } from "../contracts/entities/runs.js";
import type { ThreadStreamUpdate } from "../contracts/wire/projections.js";
import { RecordedStream, wsClient } from "../testkit/wireClients.js";
import { type RepoHarness, startRepoHarness } from "../testkit/workspaceHarness.js";

/**
 * A thread deleted while its run is still being prepared: the delete also
 * ends that run, in the same command, after the thread.deleted event. A real
 * WebSocket subscription of the thread must receive that end before the
 * stream completes, or its client keeps a run that looks like it is starting
 * forever. The real server on a real repository whose setup command blocks.
 */

let env: RepoHarness | null = null;
let client: LoomWsClient | null = null;
afterEach(async () => {
  await client?.close();
  client = null;
  await env?.close();
  env = null;
});

type EventUpdate = Extract<ThreadStreamUpdate, { kind: "event" }>;

describe("the subscription of a thread deleted while its run is preparing", () => {
  it("streams every event the deleting command committed, the run's end after thread.deleted included, then completes", async () => {
    env = await startRepoHarness({ setup: "while [ ! -f go ]; do sleep 0.05; done" });
    const { h } = env;
    const launched = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: "never runs" });
    await h.until(() => h.run(launched.runId).preparation?.status === "preparing" || undefined, "the run to be preparing its worktree");

    client = await wsClient(h);
    const stream = RecordedStream.open(client, "orchestration.subscribeThread", { threadId: launched.threadId });
    await stream.next((update) => update.kind === "snapshot", "the snapshot");
    const commandId = `cmd:delete:${randomUUID()}`;
    await client.request("orchestration.dispatchCommand", { command: { type: "thread.delete", commandId, data: { threadId: launched.threadId } } });
    await stream.ended();

    expect(stream.completed).toBe(true);
    const events = stream.updates.filter((update): update is EventUpdate => update.kind === "event").map((update) => update.event);
    // Exactly the deleting command's events of this thread, in log order: nothing missing, nothing after it.
    const receipt = await h.server.orchestrator.receiptOf(commandId);
    if (receipt?.status !== "accepted") throw new Error(`the delete was not accepted: ${JSON.stringify(receipt)}`);
    const logged = (await h.server.orchestrator.eventsOf(receipt)).filter((event) => event.streamId === launched.threadId).map((event) => event.sequence);
    expect(logged.length).toBeGreaterThan(1);
    expect(events.map((event) => event.sequence)).toEqual(logged);
    const deletedAt = events.findIndex((event) => event.type === "thread.deleted");
    const runEnds = events.filter((event, index) => index > deletedAt && event.type === "run.updated").map((event) => (event.data as { run: Run }).run);
    expect(runEnds.find((run) => run.id === launched.runId)).toMatchObject({ status: "interrupted", endReason: "thread_deleted" });
    expect(h.run(launched.runId)).toMatchObject({ status: "interrupted", endReason: "thread_deleted" });
  });
});
