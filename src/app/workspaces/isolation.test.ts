import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, startRepoHarness } from "../../testkit/workspaceHarness.js";
import { databaseNameOf } from "./isolation.js";

/**
 * Isolation beyond files, through the real server on a real repository: two
 * worktree children each start a real HTTP server on their PORT at the same
 * time, and the project's setup command sees the same variables.
 */

let env: RepoHarness | null = null;
let folder: { readonly path: string; remove(): void } | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
  folder?.remove();
  folder = null;
});

/** A port the system just handed out: the test's blocks start there, clear of other servers on this machine. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Listens on PORT, answers with its worktree's name, writes `listening`, and stops once the release file exists. */
const SERVER = `
const http = require("node:http");
const fs = require("node:fs");
const server = http.createServer((req, res) => res.end(process.env.LOOM_WORKTREE_NAME));
server.on("error", (error) => { console.error(error.code); process.exit(3); });
server.listen(Number(process.env.PORT), "127.0.0.1", () => {
  fs.writeFileSync("listening", process.env.PORT);
  const poll = setInterval(() => {
    if (!fs.existsSync(process.argv[2])) return;
    clearInterval(poll);
    server.close(() => console.log("served on " + process.env.PORT));
  }, 20);
});
`;

describe("worktree isolation beyond files", () => {
  it("gives each worktree child its own port block and names: both serve on PORT at once, and the setup sees the same variables", async () => {
    const start = await freePort();
    folder = tempDir("isolation");
    const serverPath = join(folder.path, "server.cjs");
    const release = join(folder.path, "release");
    writeFileSync(serverPath, SERVER);
    env = await startRepoHarness({
      setup: `printf '%s %s %s %s %s' "$PORT" "$LOOM_PORT_BASE" "$LOOM_PORT_COUNT" "$LOOM_WORKTREE_NAME" "$LOOM_DB_NAME" > .isolation`,
      workspaces: { portRangeStart: start, portBlockSize: 5 },
    });
    const { h } = env;
    const child = script({ run: `node ${JSON.stringify(serverPath)} ${JSON.stringify(release)}` });
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { call: "delegate_task", args: { task: child, isolation: "worktree", clientRequestId: "c1" }, as: "one" },
        { call: "delegate_task", args: { task: child, isolation: "worktree", clientRequestId: "c2" }, as: "two" },
        { say: "{{one.childThreadId}} {{two.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const ids = h.assistantTexts(parent.threadId).at(-1)!.split(" ");
    const paths = await h.until(() => {
      const found = ids.map((id) => h.state.threads.get(id)?.worktreePath ?? null);
      return found.every((path) => path !== null && existsSync(join(path, "listening"))) ? (found as string[]) : null;
    }, "both children's servers listening", 30_000);

    // Both servers are up at once, each on its own block's first port, answering with its own worktree's name.
    const blocks = ids.map((id) => h.state.threads.get(id)!.workspace!.portBlock!);
    expect([...blocks].sort()).toEqual([0, 1]);
    const ports = paths.map((path) => Number(readFileSync(join(path, "listening"), "utf8")));
    expect(ports).toEqual(blocks.map((block) => start + block * 5));
    for (const [i, port] of ports.entries()) {
      const answer = await fetch(`http://127.0.0.1:${port}/`);
      expect(await answer.text()).toBe(basename(paths[i]!));
    }
    for (const [i, path] of paths.entries()) {
      const name = basename(path);
      expect(readFileSync(join(path, ".isolation"), "utf8")).toBe(`${ports[i]} ${ports[i]} 5 ${name} ${databaseNameOf(name)}`);
    }
    expect(databaseNameOf(basename(paths[0]!))).toMatch(/^loom_[a-z0-9_]+$/);

    writeFileSync(release, "");
    for (const id of ids) {
      const run = h.runs(id)[0]!;
      expect((await h.waitForEnd(run.id)).status).toBe("completed");
      const command = h.state.turnItems.get(id)!.find((item) => item?.type === "command_execution" && item.command.startsWith("node"));
      expect(command).toMatchObject({ exitCode: 0 });
    }
  });

  it("frees a deleted child's block for the next worktree", async () => {
    const start = await freePort();
    env = await startRepoHarness({ workspaces: { portRangeStart: start, portBlockSize: 5 } });
    const { h } = env;
    const launch = () => h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: script({ say: "ok" }) });
    const first = await launch();
    const second = await launch();
    for (const run of [first.runId, second.runId]) await h.waitForEnd(run);
    const blockOf = (threadId: string) => h.state.threads.get(threadId)?.workspace?.portBlock;
    expect([blockOf(first.threadId), blockOf(second.threadId)]).toEqual([0, 1]);
    expect((await h.dispatch("thread.delete", { threadId: first.threadId })).status).toBe(200);
    const third = await launch();
    await h.waitForEnd(third.runId);
    expect(blockOf(third.threadId)).toBe(0);
  });
});
