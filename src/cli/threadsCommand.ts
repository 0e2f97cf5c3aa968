import { parseArgs } from "node:util";
import { ThreadListInput, ThreadReadInput, ThreadSendInput } from "../contracts/tools/threadTools.js";
import { COMMON, type Output, defined, oneOf, positionals, positiveInt, withServer } from "./args.js";
import type { LoomToolCaller } from "./client.js";
import { ExitCode, UsageError } from "./errors.js";
import { formatJson, formatLaunch, formatSend, formatThreadList, formatTranscript, formatWait, mergeReadPages } from "./output.js";
import type { ThreadLaunchResult, ThreadListResult, ThreadReadResult, ThreadSendResult, ThreadWaitResult } from "./results.js";
import { THREAD_CONTROL_COMMANDS, THREAD_CONTROL_HELP, THREAD_CONTROL_USAGE, runThreadControl } from "./threadControlCommand.js";
import { waitForRun, waitForTree } from "./threadWaits.js";
import { type ThreadTreeResult, formatLineageHeader } from "./treeOutput.js";
import { MAX_DIFF_BYTES, type ThreadDiffOutput } from "../contracts/workspaceQueries.js";
import { OwnerApi } from "./ownerApi.js";
import { formatDiff } from "./workspaceOutput.js";
import { THREAD_WATCH_HELP, THREAD_WATCH_USAGE, runThreadWatch } from "./threadWatchCommand.js";

export const THREADS_USAGE = `  loom threads list [--all] [--project ID] [--status S] [--limit N] [--offset N] [--json]
  loom threads launch --message TEXT [--provider ID] [--model M] [--title T] [--project ID] [--wait] [--json]
  loom threads read ID [--view messages|activity] [--json]
  loom threads send ID TEXT [--mode auto|queue|steer|restart] [--wait] [--timeout MS] [--json]
  loom threads wait ID [--run RUNID | --tree] [--timeout MS] [--json]
  loom threads diff ID [--run RUNID | --full] [--max-bytes N] [--json]
${THREAD_WATCH_USAGE}
${THREAD_CONTROL_USAGE}`;

/** The status filters of `threads list`: the tool's values, and dashed spellings for the waiting ones. */
type ListStatus = NonNullable<ThreadListInput["status"]>;
const STATUS_ALIASES: Readonly<Record<string, ListStatus>> = {
  "waiting-on-approval": "waiting_on_approval",
  "waiting-on-input": "waiting_on_user_input",
  "waiting-on-user-input": "waiting_on_user_input",
  "waiting-on-children": "waiting_on_subagent",
  "waiting-on-subagent": "waiting_on_subagent",
};
const LIST_STATUSES: readonly string[] = [...ThreadListInput.shape.status.unwrap().options.filter((s) => !s.startsWith("waiting_on_")), "waiting-on-approval", "waiting-on-input", "waiting-on-children"];

function listStatus(value: string | undefined): ListStatus | undefined {
  if (value === undefined) return undefined;
  const alias = STATUS_ALIASES[value];
  if (alias !== undefined) return alias;
  const options: readonly string[] = ThreadListInput.shape.status.unwrap().options;
  if (options.includes(value)) return value as ListStatus;
  throw new UsageError(`--status must be one of ${LIST_STATUSES.join(", ")}, got "${value}"`);
}

export const THREADS_HELP = `Usage:
${THREADS_USAGE}

The threads commands call the running server's MCP tools and owner HTTP
routes as its owner. They find it through <state-dir>/server.json and the
token in <state-dir>/owner-token; every one takes --state-dir DIR (default
$LOOM_STATE_DIR, else ~/.loom). Wherever a thread ID is asked for, a unique
prefix of it works too ("thread:" may be left out); an ambiguous prefix fails
and lists the threads it matches.

  list     t3_thread_list: threads newest first, 25 a page by default; every
           project unless --project. --all adds delegated children and forks,
           with their parent. --status: ${LIST_STATUSES.join(", ")}.
  launch   t3_thread_launch: a new thread on --provider (default: the first
           available instance) that starts with --message. --wait then waits
           for the run to end; with --json it prints the launch and wait
           results merged into one object.
  read     t3_thread_read: the whole transcript, oldest first, following
           every page; --json merges the pages' items into one result. The
           header names the thread's parent and children. --view activity
           shows tool calls, commands, approvals and questions (with their
           request ids) too.
  send     t3_thread_send: --mode auto (default) starts an idle thread, steers
           a running turn that can be steered, else queues. --wait then waits
           for the run this send started, steered or queued (never a later one).
  wait     t3_thread_wait: wait for a run (default: the latest) to end,
           repeating the call past the server's wait cap. --tree waits until
           the thread and every descendant has no unfinished run.
  diff     a turn's changes (default: the latest turn with a checkpoint;
           --run RUNID for another), or with --full everything the thread
           changed since its first checkpoint, uncaptured changes included:
           per-file stats, then the unified diff. --max-bytes caps the patch
           (default 1 MiB); a cut patch ends with a "# loom: diff truncated" line.
${THREAD_WATCH_HELP}${THREAD_CONTROL_HELP}
--json prints the tool's structuredContent as JSON on stdout. Waits show
progress on stderr: a spinner on a terminal, else a line every few seconds.
Exit codes: 0 done; 1 a tool failed (stderr: "code: message") or another
error; 2 usage error; 3 no server is running for the state dir; 4 a wait's
--timeout passed first (the state so far is still printed).
`;

/** `loom threads <command> ...`; resolves with the exit code. */
export async function runThreads(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    if (sub === undefined) throw new UsageError(`loom threads needs a command: list, launch, read, send, wait, diff, watch, ${THREAD_CONTROL_COMMANDS.join(", ")} (see loom threads --help)`);
    out(THREADS_HELP);
    return 0;
  }
  const stderr = process.stderr;
  switch (sub) {
    case "list": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, all: { type: "boolean" }, project: { type: "string" }, status: { type: "string" }, limit: { type: "string" }, offset: { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      positionals("threads", sub, args, []);
      const input = {
        projectId: values.project,
        status: listStatus(values.status),
        includeSubagents: values.all === true ? true : undefined,
        limit: positiveInt("limit", values.limit, 1, 100),
        offset: positiveInt("offset", values.offset, 0, Number.MAX_SAFE_INTEGER),
      };
      return withServer(values["state-dir"], async (caller) => {
        const result = await caller.call<ThreadListResult>("t3_thread_list", defined(input));
        out(values.json === true ? formatJson(result) : formatThreadList(result, { parents: values.all === true }));
      });
    }
    case "launch": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: {
          ...COMMON,
          provider: { type: "string" },
          message: { type: "string" },
          title: { type: "string" },
          model: { type: "string" },
          project: { type: "string" },
          wait: { type: "boolean" },
        },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      positionals("threads", sub, args, []);
      if (values.message === undefined) throw new UsageError("loom threads launch needs --message TEXT");
      const target = defined({ providerInstanceId: values.provider, model: values.model });
      const input = defined({ message: values.message, title: values.title, projectId: values.project, target: Object.keys(target).length === 0 ? undefined : target });
      return withServer(values["state-dir"], async (caller) => {
        const launched = await caller.call<ThreadLaunchResult>("t3_thread_launch", input);
        if (values.wait !== true || launched.runId === null) {
          out(values.json === true ? formatJson(launched) : formatLaunch(launched));
          return;
        }
        if (values.json !== true) out(formatLaunch(launched));
        const waited = await waitForRun(caller, { threadId: launched.threadId, runId: launched.runId, knownStatus: launched.status }, stderr);
        out(values.json === true ? formatJson({ ...launched, ...waited }) : formatWait(waited));
      });
    }
    case "read": {
      const { values, positionals: args } = parseArgs({ args: [...rest], options: { ...COMMON, view: { type: "string" } }, allowPositionals: true });
      if (values.help === true) return help(out);
      const [threadRef] = positionals("threads", sub, args, ["ID"]);
      const view = oneOf("view", values.view, ThreadReadInput.shape.view.unwrap().options);
      return withServer(values["state-dir"], async (caller) => {
        const threadId = await caller.resolveThread(threadRef!);
        const read = await readAll(caller, threadId, view);
        if (values.json === true) {
          out(formatJson(read));
          return;
        }
        const tree = await caller.api.request<ThreadTreeResult>("GET", `/api/threads/tree?root=${encodeURIComponent(threadId)}`);
        out(formatTranscript(read, formatLineageHeader(tree)));
      });
    }
    case "send": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, mode: { type: "string" }, wait: { type: "boolean" }, timeout: { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      const [threadRef, message] = positionals("threads", sub, args, ["ID", "TEXT"]);
      const mode = oneOf("mode", values.mode, ThreadSendInput.shape.mode.unwrap().options);
      const timeoutMs = positiveInt("timeout", values.timeout, 0, 3_600_000);
      if (timeoutMs !== undefined && values.wait !== true) throw new UsageError("--timeout goes with --wait");
      return withServer(values["state-dir"], async (caller) => {
        const threadId = await caller.resolveThread(threadRef!);
        const sent = await caller.call<ThreadSendResult>("t3_thread_send", defined({ threadId, message, mode }));
        if (values.wait !== true || sent.runId === null) {
          out(values.json === true ? formatJson(sent) : formatSend(sent));
          return;
        }
        if (values.json !== true) out(formatSend(sent));
        const waited = await waitForRun(caller, { threadId, runId: sent.runId, timeoutMs, knownStatus: sent.runStatus ?? undefined }, stderr);
        out(values.json === true ? formatJson({ ...sent, wait: waited }) : formatWait(waited));
        return waitExit(waited);
      });
    }
    case "wait": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, run: { type: "string" }, tree: { type: "boolean" }, timeout: { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      const [threadRef] = positionals("threads", sub, args, ["ID"]);
      const timeoutMs = positiveInt("timeout", values.timeout, 0, 3_600_000);
      if (values.tree === true && values.run !== undefined) throw new UsageError("--tree waits for every run of the tree; it does not take --run");
      return withServer(values["state-dir"], async (caller) => {
        const threadId = await caller.resolveThread(threadRef!);
        if (values.tree === true) {
          const waited = await waitForTree(caller, { threadId, timeoutMs }, stderr);
          out(values.json === true ? formatJson(waited) : waited.text);
          return waited.timedOut ? ExitCode.timedOut : ExitCode.ok;
        }
        const waited = await waitForRun(caller, { threadId, runId: values.run, timeoutMs }, stderr);
        out(values.json === true ? formatJson(waited) : formatWait(waited));
        return waitExit(waited);
      });
    }
    case "diff": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, run: { type: "string" }, full: { type: "boolean" }, "max-bytes": { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      const [threadRef] = positionals("threads", sub, args, ["ID"]);
      if (values.full === true && values.run !== undefined) throw new UsageError("--run and --full do not go together: --full diffs the whole thread");
      const maxBytes = positiveInt("max-bytes", values["max-bytes"], 1, MAX_DIFF_BYTES);
      const api = OwnerApi.connect(values["state-dir"]);
      const threadId = await api.resolveThread(threadRef!);
      const path = `/api/orchestration/threads/${encodeURIComponent(threadId)}/${values.full === true ? "full-diff" : "turn-diff"}`;
      const diff = await api.get<ThreadDiffOutput>(path, { runId: values.run, maxBytes: maxBytes === undefined ? undefined : String(maxBytes) });
      out(values.json === true ? formatJson(diff) : formatDiff(diff));
      return 0;
    }
    case "watch":
      return runThreadWatch(rest, out);
    default:
      if ((THREAD_CONTROL_COMMANDS as readonly string[]).includes(sub)) return runThreadControl(sub, rest, out);
      throw new UsageError(`unknown threads command "${sub}" (see loom threads --help)`);
  }
}

/** A wait that ran out of --timeout before its run ended exits with ExitCode.timedOut. */
function waitExit(waited: ThreadWaitResult): number {
  return waited.waitTimedOut && waited.runId !== null ? ExitCode.timedOut : ExitCode.ok;
}

function help(out: Output): number {
  out(THREADS_HELP);
  return 0;
}

/** Every item of the view, oldest first: follow nextPosition while hasMore. */
async function readAll(caller: LoomToolCaller, threadId: string, view: string | undefined): Promise<ThreadReadResult> {
  const pages: ThreadReadResult[] = [];
  let after = -1;
  for (;;) {
    const page = await caller.call<ThreadReadResult>("t3_thread_read", defined({ threadId, view, afterPosition: after, limit: 200 }));
    pages.push(page);
    if (!page.hasMore || page.nextPosition === null || page.nextPosition <= after) break;
    after = page.nextPosition;
  }
  return mergeReadPages(pages);
}
