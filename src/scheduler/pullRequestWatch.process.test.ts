import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { script } from "../testkit/loomHarness.js";
import { ServeRig } from "../testkit/serveRig.js";
import type { LoomMcpClient } from "../testkit/mcpClient.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * Pull request watches end to end: the built `loom serve` with a fake `gh`
 * first on PATH (a script answering `gh pr view URL --json ...` from a state
 * file the test edits), commands over the real HTTP API, results over real
 * MCP.
 */

const PR1 = "https://github.com/acme/widgets/pull/7";
const PR2 = "https://github.com/acme/widgets/pull/8";
const BROKEN = "https://github.com/acme/widgets/pull/9";

interface LinkedView {
  url: string;
  title: string | null;
  status: { state: string; reviewDecision: string | null; checks: string } | null;
  watched: boolean;
}

let dir: string;
let stateDir: string;
let prStates: string;
let rig: ServeRig;

/** The fake gh: `pr view URL --json ...` prints the state file's entry for URL, or fails like gh does. */
const FAKE_GH = `#!/usr/bin/env node
const { appendFileSync, readFileSync } = require("node:fs");
const [cmd, sub, url] = process.argv.slice(2);
appendFileSync(process.env.FAKE_GH_LOG, url + "\\n");
const states = JSON.parse(readFileSync(process.env.FAKE_GH_STATES, "utf8"));
const pr = states[url];
if (cmd !== "pr" || sub !== "view" || pr === undefined) {
  process.stderr.write("GraphQL: Could not resolve to a PullRequest (" + url + ")\\n");
  process.exit(1);
}
process.stdout.write(JSON.stringify(pr));
`;

function setPr(url: string, view: Record<string, unknown>): void {
  const current = JSON.parse(readFileSync(prStates, "utf8")) as Record<string, unknown>;
  writeFileSync(prStates, JSON.stringify({ ...current, [url]: view }));
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-pr-watch-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "pr-watch-test");
  mkdirSync(stateDir);
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, "bin", "gh"), FAKE_GH);
  chmodSync(join(dir, "bin", "gh"), 0o755);
  prStates = join(dir, "prs.json");
  writeFileSync(prStates, "{}");
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }] }));
});
afterEach(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(): Promise<{ client: LoomMcpClient; dispatch: (type: string, data: Record<string, unknown>) => Promise<Response>; token: string; url: string }> {
  const env = { ...process.env, PATH: `${join(dir, "bin")}${delimiter}${process.env.PATH ?? ""}`, FAKE_GH_STATES: prStates, FAKE_GH_LOG: join(dir, "gh.log") };
  const { serve: started, client, token } = await rig.start({ env });
  let n = 0;
  const dispatch = (type: string, data: Record<string, unknown>) =>
    fetch(`${started.url}/api/orchestration/dispatch`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ type, commandId: `test:${type}:${++n}`, data }),
    });
  return { client, dispatch, token, url: started.url };
}

function linked(client: LoomMcpClient, threadId: string, done: (pr: LinkedView | null) => boolean): Promise<LinkedView | null> {
  return pollUntil(async () => (await client.ok<{ thread: { pullRequest: LinkedView | null } }>("t3_thread_read", { threadId })).thread.pullRequest, done, `thread ${threadId}'s pull request`);
}

describe("pull request watches", () => {
  it("reads a linked pull request through gh on every interval, follows it to merged, then ends the watch", async () => {
    const { client, dispatch } = await serve();
    setPr(PR1, { state: "OPEN", reviewDecision: "REVIEW_REQUIRED", title: "Add widgets", number: 7, statusCheckRollup: [{ status: "IN_PROGRESS", conclusion: "" }] });
    const { threadId } = await client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "PR work", message: script({ say: "done" }) });
    expect((await dispatch("thread.pull-request.link", { threadId, url: PR1 })).status).toBe(200);
    expect((await dispatch("thread.pull-request.watch", { threadId, intervalMs: 1_000 })).status).toBe(200);

    const open = await linked(client, threadId, (pr) => pr?.status != null);
    expect(open).toMatchObject({ url: PR1, title: "Add widgets", watched: true, status: { state: "open", reviewDecision: "review_required", checks: "pending" } });

    setPr(PR1, { state: "OPEN", reviewDecision: "APPROVED", title: "Add widgets", number: 7, statusCheckRollup: [{ status: "COMPLETED", conclusion: "SUCCESS" }] });
    await linked(client, threadId, (pr) => pr?.status?.reviewDecision === "approved" && pr.status.checks === "passing");

    setPr(PR1, { state: "MERGED", reviewDecision: "APPROVED", title: "Add widgets", number: 7, statusCheckRollup: [{ status: "COMPLETED", conclusion: "SUCCESS" }] });
    const merged = await linked(client, threadId, (pr) => pr?.status?.state === "merged");
    expect(merged?.watched).toBe(false);
  });

  it("Stop ends a watch; a one-time sync reads once; a pull request gh cannot read is reported, not fatal", async () => {
    const { client, dispatch, token, url } = await serve();
    setPr(PR2, { state: "OPEN", reviewDecision: "", title: "More widgets", number: 8, statusCheckRollup: [{ state: "FAILURE" }] });
    const { threadId } = await client.ok<{ threadId: string }>("t3_thread_launch", { title: "PR work", message: script({ say: "done" }) });
    await dispatch("thread.pull-request.link", { threadId, url: PR2 });

    // One-time sync: reads once, no watch afterwards.
    expect((await dispatch("thread.pull-request.sync", { threadId })).status).toBe(200);
    const once = await linked(client, threadId, (pr) => pr?.status != null);
    expect(once).toMatchObject({ watched: false, status: { state: "open", reviewDecision: null, checks: "failing" } });

    // A watch Stop ends.
    await dispatch("thread.pull-request.watch", { threadId, intervalMs: 60_000 });
    await linked(client, threadId, (pr) => pr?.watched === true);
    expect((await dispatch("thread.stop", { threadId })).status).toBe(200);
    await linked(client, threadId, (pr) => pr?.watched === false);

    // A pull request gh cannot read: the watch goes on and says why.
    const other = await client.ok<{ threadId: string }>("t3_thread_launch", { title: "Broken PR", message: script({ say: "done" }) });
    await dispatch("thread.pull-request.link", { threadId: other.threadId, url: BROKEN });
    await dispatch("thread.pull-request.watch", { threadId: other.threadId, intervalMs: 60_000 });
    const snapshot = await pollUntil(
      async () =>
        (await (await fetch(`${url}/api/orchestration/threads/${encodeURIComponent(other.threadId)}/snapshot`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          thread: { pullRequestWatch: { lastError: string | null; lastSyncAt: string | null } | null };
        },
      (s) => s.thread.pullRequestWatch?.lastSyncAt != null,
      "the broken pull request's sync",
    );
    expect(snapshot.thread.pullRequestWatch?.lastError).toContain("Could not resolve to a PullRequest");
  });

  it("refuses bad watch input with a typed error and writes nothing", async () => {
    const { client, dispatch, token, url } = await serve();
    const { threadId } = await client.ok<{ threadId: string }>("t3_thread_launch", { title: "PR work", message: script({ say: "done" }) });
    const threadRecord = async () =>
      ((await (await fetch(`${url}/api/orchestration/threads/${encodeURIComponent(threadId)}/snapshot`, { headers: { authorization: `Bearer ${token}` } })).json()) as { thread: unknown }).thread;
    await client.ok("t3_thread_wait", { threadId, timeoutMs: 10_000 });
    const before = await threadRecord();
    const tooFast = await dispatch("thread.pull-request.watch", { threadId, intervalMs: 5 });
    expect(tooFast.status).toBe(400);
    expect(((await tooFast.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    const notLinked = await dispatch("thread.pull-request.watch", { threadId });
    expect(notLinked.status).toBe(409);
    expect(((await notLinked.json()) as { rejection: { code: string } }).rejection.code).toBe("pull_request_not_linked");
    const internal = await dispatch("thread.pull-request-watch.sync", { threadId, dueAt: new Date().toISOString(), results: [] });
    expect(internal.status).toBe(400);
    expect(await threadRecord()).toEqual(before);
  });
});
