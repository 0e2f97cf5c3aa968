import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * The delegation tree from the terminal, against a real `loom serve` with
 * scripted agents: see it (list --all, tree, read's header), answer it
 * (requests list / respond), steer it (rename, archive, interrupt, stop,
 * tasks), wait on all of it (wait --tree), with ids given as prefixes.
 */
let stateDir: string;
let projectRoot: string;
let serve: ServeProcess;

function loom(...args: string[]): Promise<Ran> {
  return runLoom([...args, "--state-dir", stateDir]);
}

function json<T>(ran: Ran): T {
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as T;
}

const script = (...steps: unknown[]): string => JSON.stringify({ script: steps });
/** A child's script inside a parent's: its templates escaped so the child, not the parent, fills them in. */
const childScript = (...steps: unknown[]): string => script(...steps).replaceAll("{{", "\\u007b\\u007b");


interface Listed {
  threads: { threadId: string; status: string; title: string; parentThreadId: string | null; relation: string }[];
}
interface Inbox {
  requests: { requestId: string; threadId: string; kind: string; approval: boolean; title: string; detail: string; parentThreadId: string | null }[];
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-inbox-"));
  projectRoot = mkdtempSync(join(tmpdir(), "loom-cli-inbox-project-"));
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "demo", root: projectRoot }], waits: { maxWaitMs: 1_000 } }));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(projectRoot, { recursive: true, force: true });
});

describe("the delegation tree from the CLI", () => {
  it("shows the tree, answers an approval and a question by id prefix, and waits for the whole tree", { timeout: 240_000 }, async () => {
    const approvalChild = childScript({ approve: { kind: "command", title: "Clean the build", detail: "rm -rf build" } }, { say: "approval was {{approval.decision}}" });
    const questionChild = childScript({ ask: "which color?" }, { say: "color is {{answer}}" });
    const parentScript = script(
      { call: "delegate_task", args: { task: approvalChild, title: "Cleaner", target: { providerInstanceId: "scripted" } }, as: "a" },
      { call: "delegate_task", args: { task: questionChild, title: "Painter", target: { providerInstanceId: "scripted" } }, as: "q" },
      { say: "delegated" },
    );
    const parent = json<{ threadId: string; status: string }>(await loom("threads", "launch", "--message", parentScript, "--title", "Boss", "--wait", "--json"));
    expect(parent.status).toBe("completed");

    // Both children are blocked: one on an approval, one on a question.
    const inbox = await pollUntil(async () => json<Inbox>(await loom("requests", "list", "--json")), (listed) => listed.requests.length === 2, "two pending requests", 30_000);
    const approval = inbox.requests.find((r) => r.approval)!;
    const question = inbox.requests.find((r) => !r.approval)!;
    expect(approval).toMatchObject({ kind: "command", title: "Clean the build", detail: "rm -rf build", parentThreadId: parent.threadId });
    expect(question).toMatchObject({ kind: "user_input", detail: "which color?", parentThreadId: parent.threadId });
    const inboxText = await loom("requests", "list");
    expect(inboxText.stdout).toContain(`${approval.requestId}  approval (command)\n  thread: ${approval.threadId} "Cleaner" (child of ${parent.threadId})\n  Clean the build\n    rm -rf build\n`);
    expect(inboxText.stdout).toContain(`answer: loom requests respond ${question.requestId} --answer TEXT | --dismiss`);

    // Children are hidden from the plain list, shown with --all and by the waiting filters.
    const plain = json<Listed>(await loom("threads", "list", "--json"));
    expect(plain.threads.map((t) => t.threadId)).not.toContain(approval.threadId);
    const all = json<Listed>(await loom("threads", "list", "--all", "--json"));
    expect(all.threads.filter((t) => t.parentThreadId === parent.threadId).map((t) => t.threadId).sort()).toEqual([approval.threadId, question.threadId].sort());
    const onApproval = json<Listed>(await loom("threads", "list", "--all", "--status", "waiting-on-approval", "--json"));
    expect(onApproval.threads.map((t) => t.threadId)).toEqual([approval.threadId]);
    const onInput = json<Listed>(await loom("threads", "list", "--all", "--status", "waiting-on-input", "--json"));
    expect(onInput.threads.map((t) => t.threadId)).toEqual([question.threadId]);
    const allText = await loom("threads", "list", "--all");
    expect(allText.stdout.split("\n")[0]).toMatch(/^THREAD\s+STATUS\s+PROVIDER\s+UPDATED\s+PARENT\s+TITLE$/);
    expect(allText.stdout).toMatch(new RegExp(`^${approval.threadId}\\s+waiting_on_approval\\s+scripted\\s+\\S+ \\S+\\s+${parent.threadId} \\(subagent\\)\\s+Cleaner$`, "m"));

    // The tree, by a prefix of the parent's id without "thread:".
    const prefix = parent.threadId.slice("thread:".length, "thread:".length + 8);
    const tree = await loom("threads", "tree", prefix);
    expect(tree.status, tree.stderr).toBe(0);
    const lines = tree.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`${parent.threadId} completed scripted "Boss"`);
    expect(lines).toContain(`├─ ${approval.threadId} waiting_on_approval [subagent] scripted "Cleaner" — waiting on approval ${approval.requestId}`);
    expect(lines).toContain(`└─ ${question.threadId} waiting_on_user_input [subagent] scripted "Painter" — waiting on input ${question.requestId}`);

    // read names the parent and the children; the activity view shows the request id.
    const childRead = await loom("threads", "read", approval.threadId, "--view", "activity");
    expect(childRead.stdout.split("\n").slice(2, 4)).toEqual([`parent: ${parent.threadId} "Boss" (subagent)`, `waiting on approval ${approval.requestId}`]);
    expect(childRead.stdout).toContain(`approval_request (pending) [${approval.requestId}]:`);
    // The child's brief was written by its parent agent, not by the person.
    const childMessages = await loom("threads", "read", approval.threadId);
    expect(childMessages.stdout).toContain(`\nagent:\n  {"script"`);
    expect(childMessages.stdout).not.toMatch(/^user:$/m);
    const parentRead = await loom("threads", "read", parent.threadId);
    expect(parentRead.stdout.split("\n")[2]).toBe(`children: ${approval.threadId} (waiting_on_approval), ${question.threadId} (waiting_on_user_input)`);

    // An ambiguous prefix names the candidates; an unknown one is not found.
    const ambiguous = await loom("threads", "read", "thread:");
    expect(ambiguous.status).toBe(1);
    expect(ambiguous.stderr).toMatch(/^invalid_request: thread id prefix "thread:" is ambiguous: it matches thread:\S+ \(/);
    expect(ambiguous.stderr).toContain(approval.threadId);
    expect(await loom("threads", "tree", "zzzz-none")).toEqual({ status: 1, stdout: "", stderr: "thread_not_found: thread zzzz-none does not exist\n" });

    // Answer both, the approval by a prefix of its request id.
    const wrongKind = await loom("requests", "respond", question.requestId, "--approve");
    expect(wrongKind.status).toBe(1);
    expect(wrongKind.stderr).toMatch(/^invalid_request: request \S+ is a question: answer it/);
    const approvalPrefix = approval.requestId.slice(0, approval.requestId.length - 4);
    const approved = await loom("requests", "respond", approvalPrefix, "--approve");
    expect(approved).toEqual({ status: 0, stdout: `${approval.requestId} (command) in ${approval.threadId}: accept\n`, stderr: "" });
    const answered = json<{ status: string; resolution: unknown }>(await loom("requests", "respond", question.requestId, "--answer", "blue", "--json"));
    expect(answered).toEqual({ requestId: question.requestId, threadId: question.threadId, kind: "user_input", status: "resolved", resolution: { answers: { q1: ["blue"] } } });
    const again = await loom("requests", "respond", approval.requestId, "--decline");
    expect(again.status).toBe(1);
    expect(again.stderr).toBe(`invalid_request: request ${approval.requestId} is already resolved\n`);

    // The whole tree settles: both children, then the parent's follow-ups for their results.
    const settled = await loom("threads", "wait", prefix, "--tree");
    expect(settled.status, settled.stderr).toBe(0);
    expect(settled.stdout.split("\n")[0]).toBe(`tree of ${parent.threadId} is idle`);
    const task = json<{ status: string; summary: string; childThreadId: string }>(await loom("tasks", "status", approval.threadId.split(":").pop()!.slice(0, 8), "--json"));
    expect(task).toMatchObject({ status: "completed", summary: "approval was accept", childThreadId: approval.threadId });
    expect((await loom("tasks", "status", question.threadId)).stdout).toMatch(/^task subagent:\S+: completed \(result_available\)\nchild thread \S+ on scripted \(scripted-1\)\n\ncolor is blue\n$/);
    expect(json<Inbox>(await loom("requests", "list", "--json")).requests).toEqual([]);
    expect((await loom("requests", "list")).stdout).toBe("no pending requests\n");
  });

  it("renames, archives, interrupts and stops threads, cancels a task, and exits 4 when a wait's --timeout passes", { timeout: 240_000 }, async () => {
    const sleeper = json<{ threadId: string; runId: string }>(await loom("threads", "launch", "--message", script({ sleep: 120_000 }), "--json"));
    // A script with nothing to say gets the generic title, not its JSON.
    expect(json<{ thread: { title: string } }>(await loom("threads", "read", sleeper.threadId, "--json")).thread.title).toBe("New thread");
    const timedOut = await loom("threads", "wait", sleeper.threadId, "--timeout", "300", "--json");
    expect(timedOut.status).toBe(4);
    expect(JSON.parse(timedOut.stdout)).toMatchObject({ runId: sleeper.runId, waitTimedOut: true });
    const treeTimedOut = await loom("threads", "wait", sleeper.threadId, "--tree", "--timeout", "300");
    expect(treeTimedOut.status).toBe(4);
    expect(treeTimedOut.stdout.split("\n")[0]).toBe(`tree of ${sleeper.threadId} still has 1 unfinished thread(s) (wait timed out)`);

    expect(await loom("threads", "interrupt", sleeper.threadId)).toEqual({ status: 0, stdout: `${sleeper.threadId}: run ${sleeper.runId} interrupted\n`, stderr: "" });
    expect(json<{ status: string }>(await loom("threads", "wait", sleeper.threadId, "--json")).status).toBe("interrupted");
    expect((await loom("threads", "interrupt", sleeper.threadId)).stdout).toBe(`${sleeper.threadId}: has no active run\n`);

    // send --wait pins the run it started and exits 4 on its own --timeout.
    const sent = await loom("threads", "send", sleeper.threadId, script({ sleep: 120_000 }), "--wait", "--timeout", "300", "--json");
    expect(sent.status).toBe(4);
    const sentJson = JSON.parse(sent.stdout) as { runId: string; wait: { runId: string; waitTimedOut: boolean } };
    expect(sentJson.wait).toMatchObject({ runId: sentJson.runId, waitTimedOut: true });
    expect(await loom("threads", "stop", sleeper.threadId)).toEqual({ status: 0, stdout: `${sleeper.threadId}: stopped\n`, stderr: "" });
    const afterStop = json<{ runId: string; status: string }>(await loom("threads", "wait", sleeper.threadId, "--run", sentJson.runId, "--json"));
    expect(["interrupted", "cancelled"]).toContain(afterStop.status);

    expect((await loom("threads", "rename", sleeper.threadId, "Nap time")).stdout).toBe(`${sleeper.threadId}: renamed to "Nap time"\n`);
    expect(json<{ thread: { title: string } }>(await loom("threads", "read", sleeper.threadId, "--json")).thread.title).toBe("Nap time");
    expect((await loom("threads", "archive", sleeper.threadId)).stdout).toBe(`${sleeper.threadId}: archived\n`);
    expect(json<Listed>(await loom("threads", "list", "--json")).threads.map((t) => t.threadId)).not.toContain(sleeper.threadId);
    expect((await loom("threads", "tree", "--archived")).stdout).toContain(`${sleeper.threadId} `);
    expect((await loom("threads", "tree")).stdout).not.toContain(`${sleeper.threadId} `);
    expect((await loom("threads", "unarchive", sleeper.threadId)).stdout).toBe(`${sleeper.threadId}: unarchived\n`);

    // A delegated child that sleeps, cancelled through its task.
    const parent = json<{ threadId: string }>(
      await loom("threads", "launch", "--message", script({ call: "delegate_task", args: { task: script({ sleep: 120_000 }), title: "Sleepy", target: { providerInstanceId: "scripted" } }, as: "t" }), "--wait", "--json"),
    );
    const children = await pollUntil(
      async () => json<Listed>(await loom("threads", "list", "--all", "--json")).threads.filter((t) => t.parentThreadId === parent.threadId),
      (found) => found.length > 0,
      "the sleepy child",
      30_000,
    );
    const child = children[0]!;
    const cancelled = json<{ taskId: string; cancelReason: string | null }>(await loom("tasks", "cancel", child.threadId, "--reason", "enough", "--json"));
    expect(cancelled.cancelReason).toBe("enough");
    expect(json<{ status: string }>(await loom("threads", "wait", child.threadId, "--json")).status).toBe("interrupted");
    expect((await loom("tasks", "status", cancelled.taskId)).stdout).toMatch(/^task subagent:\S+: interrupted \(result_available\)\n/);
    expect(await loom("tasks", "status", "subagent:nope")).toEqual({ status: 1, stdout: "", stderr: "task_not_found: task subagent:nope does not exist\n" });

    // Delete takes the subtree: asked without --yes, it names how many threads go with it and deletes nothing.
    const refused = await loom("threads", "delete", parent.threadId);
    expect(refused).toEqual({ status: 2, stdout: "", stderr: expect.stringContaining(`${parent.threadId} has 1 thread under it, deleted with it: pass --yes to delete all 2`) });
    expect(json<Listed>(await loom("threads", "list", "--all", "--json")).threads.map((t) => t.threadId)).toEqual(expect.arrayContaining([parent.threadId, child.threadId]));
    expect((await loom("threads", "delete", parent.threadId, "--yes")).stdout).toBe(`${parent.threadId}: deleted with the 1 thread under it\n`);
    const left = json<Listed>(await loom("threads", "list", "--all", "--json")).threads.map((t) => t.threadId);
    expect(left).not.toContain(parent.threadId);
    expect(left).not.toContain(child.threadId);
  });

  it("exits 2 on usage errors before connecting", { timeout: 120_000 }, async () => {
    const cases: [string[], RegExp][] = [
      [["requests", "respond", "x"], /exactly one of --approve/],
      [["requests", "respond", "x", "--approve", "--decline"], /exactly one of --approve/],
      [["requests", "frob"], /unknown requests command "frob"/],
      [["tasks", "status"], /loom tasks status takes ID, got none/],
      [["tasks", "status", "x", "--reason", "r"], /--reason goes with loom tasks cancel/],
      [["threads", "rename", "x"], /loom threads rename takes ID and TITLE/],
      [["threads", "archive", "x", "--yes"], /--yes goes with loom threads delete/],
      [["threads", "wait", "x", "--tree", "--run", "r"], /--tree waits for every run/],
      [["threads", "list", "--status", "waiting-on-lunch"], /--status must be one of .*waiting-on-approval, waiting-on-input, waiting-on-children/],
      [["threads", "send", "x", "hi", "--timeout", "5"], /--timeout goes with --wait/],
    ];
    const ran = await Promise.all(cases.map(([args]) => loom(...args)));
    cases.forEach(([args, message], i) => {
      expect({ args, status: ran[i]!.status }).toEqual({ args, status: 2 });
      expect(ran[i]!.stderr).toMatch(message);
    });
  });
});
