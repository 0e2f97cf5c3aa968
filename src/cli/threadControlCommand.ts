import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import type { ToolOutput } from "../contracts/tools/toolContracts.js";
import { COMMON, type Output, positionals, withServer } from "./args.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";
import { type ThreadTreeResult, formatTree, treeNodes } from "./treeOutput.js";

/**
 * `loom threads tree|interrupt|stop|archive|unarchive|delete|rename|share|switch`: steering a
 * thread from the terminal. Each maps onto one tool or command the server
 * already has; ids may be unique prefixes.
 */
export const THREAD_CONTROL_COMMANDS = ["tree", "interrupt", "stop", "archive", "unarchive", "delete", "rename", "share", "switch"] as const;
export type ThreadControlCommand = (typeof THREAD_CONTROL_COMMANDS)[number];

export const THREAD_CONTROL_USAGE = `  loom threads tree [ID] [--archived] [--json]
  loom threads interrupt ID [--json]
  loom threads stop ID [--reason TEXT] [--json]
  loom threads archive|unarchive ID [--json]   (with every thread under it)
  loom threads delete ID [--yes] [--json]      (with every thread under it)
  loom threads rename ID TITLE [--json]
  loom threads share ID [--close] [--json]
  loom threads switch ID [--to INSTANCE] [--json]`;

export const THREAD_CONTROL_HELP = `  tree     the lineage under ID (or under every root thread): each node's
           id, status, relation, provider, title and what it waits on
           (an approval or question by request id, its children, the queue).
           --archived includes archived threads.
  interrupt
           t3_thread_interrupt: end the running turn; the thread stays usable.
  stop     thread.stop: end the active run and cancel the thread's queued runs.
  archive, unarchive
           t3_thread_organize: hide the thread from lists, or bring it back.
  delete   t3_thread_organize: delete the thread and every thread under it
           (preparing runs end, agents are released, worktrees removed after
           a last checkpoint). With threads under it, --yes is required and
           the refusal says how many.
  rename   t3_thread_update: give the thread TITLE.
  share    a live guest share of the thread (docs/guest-share.md): prints a
           link one guest browser may open for 24 hours to watch the thread
           and suggest messages you send or dismiss; the same link while the
           share is open. --close ends it at once.
  switch   switch now: a thread waiting on a usage limit moves to INSTANCE,
           or to the first available of its failover instances, and its
           work goes on there at once instead of at the reset
           (docs/limits.md, "Failover").
`;

export async function runThreadControl(sub: string, rest: readonly string[], out: Output): Promise<number> {
  const { values, positionals: args } = parseArgs({
    args: [...rest],
    options: { ...COMMON, archived: { type: "boolean" }, reason: { type: "string" }, yes: { type: "boolean" }, close: { type: "boolean" }, to: { type: "string" } },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(`Usage:\n${THREAD_CONTROL_USAGE}\n\n${THREAD_CONTROL_HELP}`);
    return 0;
  }
  const json = values.json === true;
  // Arguments are checked before connecting, so a usage error never waits on the server.
  const expected: Record<ThreadControlCommand, readonly string[]> = { tree: args.length === 0 ? [] : ["ID"], interrupt: ["ID"], stop: ["ID"], archive: ["ID"], unarchive: ["ID"], delete: ["ID"], rename: ["ID", "TITLE"], share: ["ID"], switch: ["ID"] };
  positionals("threads", sub, args, expected[sub as ThreadControlCommand]);
  if (values.yes === true && sub !== "delete") throw new UsageError("--yes goes with loom threads delete");
  if (values.close === true && sub !== "share") throw new UsageError("--close goes with loom threads share");
  if (values.to !== undefined && sub !== "switch") throw new UsageError("--to goes with loom threads switch");
  return withServer(values["state-dir"], async (caller) => {
    switch (sub) {
      case "tree": {
        const ref = args[0];
        const query = new URLSearchParams();
        if (ref !== undefined) query.set("root", await caller.resolveThread(ref));
        if (values.archived === true) query.set("includeArchived", "1");
        const tree = await caller.api.request<ThreadTreeResult>("GET", `/api/threads/tree${query.size === 0 ? "" : `?${query.toString()}`}`);
        out(json ? formatJson(tree) : formatTree(tree));
        return;
      }
      case "interrupt": {
        const threadId = await caller.resolveThread(args[0]!);
        const result = await caller.call<ToolOutput<"t3_thread_interrupt">>("t3_thread_interrupt", { threadId });
        const said = { no_active_run: "has no active run", already_terminal: `run ${result.runId} had already ended`, interrupt_requested: `run ${result.runId} interrupted` };
        out(json ? formatJson(result) : `${threadId}: ${said[result.outcome]}\n`);
        return;
      }
      case "stop": {
        const threadId = await caller.resolveThread(args[0]!);
        const command = { type: "thread.stop", commandId: `cmd:cli-stop:${randomUUID()}`, data: { threadId, ...(values.reason === undefined ? {} : { reason: values.reason }) } };
        const receipt = await caller.api.request<{ status: string }>("POST", "/api/orchestration/dispatch", command);
        out(json ? formatJson({ threadId, ...receipt }) : `${threadId}: stopped\n`);
        return;
      }
      case "archive":
      case "unarchive": {
        const threadId = await caller.resolveThread(args[0]!);
        const result = await caller.call<ToolOutput<"t3_thread_organize">>("t3_thread_organize", { threadId, action: sub });
        out(json ? formatJson(result) : `${threadId}: ${sub}d\n`);
        return;
      }
      case "delete": {
        const threadId = await caller.resolveThread(args[0]!);
        const tree = await caller.api.request<ThreadTreeResult>("GET", `/api/threads/tree?${new URLSearchParams({ root: threadId, includeArchived: "1" }).toString()}`);
        const under = treeNodes(tree).length - 1;
        if (under > 0 && values.yes !== true) {
          throw new UsageError(`${threadId} has ${under} thread${under === 1 ? "" : "s"} under it, deleted with it: pass --yes to delete all ${under + 1}`);
        }
        const result = await caller.call<ToolOutput<"t3_thread_organize">>("t3_thread_organize", { threadId, action: "delete" });
        const count = result.affectedThreadIds.length;
        out(json ? formatJson(result) : `${threadId}: deleted${count > 1 ? ` with the ${count - 1} thread${count === 2 ? "" : "s"} under it` : ""}\n`);
        return;
      }
      case "rename": {
        const [ref, title] = args;
        const threadId = await caller.resolveThread(ref!);
        const result = await caller.call<ToolOutput<"t3_thread_update">>("t3_thread_update", { threadId, action: "rename", title });
        out(json ? formatJson(result) : `${threadId}: renamed to "${title}"\n`);
        return;
      }
      case "share": {
        const threadId = await caller.resolveThread(args[0]!);
        const path = `/api/threads/${encodeURIComponent(threadId)}/guest-share`;
        if (values.close === true) {
          const closed = await caller.api.request<{ threadId: string; closedAt: string }>("DELETE", path);
          out(json ? formatJson(closed) : `${threadId}: guest share closed\n`);
          return;
        }
        const link = await caller.api.request<{ threadId: string; url: string; expiresAt: string }>("POST", path);
        out(json ? formatJson(link) : `${link.url}\n(one browser may open it; valid until ${link.expiresAt}; close with loom threads share ${threadId} --close)\n`);
        return;
      }
      case "switch": {
        const threadId = await caller.resolveThread(args[0]!);
        const result = await caller.call<ToolOutput<"t3_thread_configure">>("t3_thread_configure", { threadId, failOver: true, ...(values.to === undefined ? {} : { providerInstanceId: values.to }) });
        out(json ? formatJson(result) : `${threadId}: moved to ${result.providerInstanceId ?? "?"}; its work goes on there\n`);
        return;
      }
      default:
        throw new Error(`unhandled threads command ${sub}`);
    }
  });
}
