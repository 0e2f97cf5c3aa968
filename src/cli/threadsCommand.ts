import { parseArgs } from "node:util";
import { ThreadListInput, ThreadReadInput, ThreadSendInput } from "../contracts/tools/threadTools.js";
import { type LoomToolCaller, connectToLoom } from "./client.js";
import { UsageError } from "./errors.js";
import { formatJson, formatLaunch, formatSend, formatThreadList, formatTranscript, formatWait, mergeReadPages } from "./output.js";
import type { ThreadLaunchResult, ThreadListResult, ThreadReadResult, ThreadSendResult } from "./results.js";
import { waitForRun } from "./threadWaits.js";
import { MAX_DIFF_BYTES, type ThreadDiffOutput } from "../contracts/workspaceQueries.js";
import { OwnerApi } from "./ownerApi.js";
import { formatDiff } from "./workspaceOutput.js";

export const THREADS_USAGE = `  loom threads list [--project ID] [--status S] [--limit N] [--offset N] [--json]
  loom threads launch --message TEXT [--provider ID] [--model M] [--title T] [--project ID] [--wait] [--json]
  loom threads read ID [--view messages|activity] [--json]
  loom threads send ID TEXT [--mode auto|queue|steer|restart] [--json]
  loom threads wait ID [--run RUNID] [--timeout MS] [--json]
  loom threads diff ID [--run RUNID | --full] [--max-bytes N] [--json]`;

export const THREADS_HELP = `Usage:
${THREADS_USAGE}

The threads commands call the running server's MCP tools as its owner. They
find it through <state-dir>/server.json and the token in <state-dir>/owner-token;
every one takes --state-dir DIR (default $LOOM_STATE_DIR, else ~/.loom).

  list     t3_thread_list: threads newest first, 25 a page by default; every
           project unless --project. --status: ${ThreadListInput.shape.status.unwrap().options.join(", ")}.
  launch   t3_thread_launch: a new thread on --provider (default: the first
           available instance) that starts with --message. --wait then waits
           for the run to end; with --json it prints the launch and wait
           results merged into one object.
  read     t3_thread_read: the whole transcript, oldest first, following
           every page; --json merges the pages' items into one result.
           --view activity shows tool calls, commands and other items too.
  send     t3_thread_send: --mode auto (default) starts an idle thread, steers
           a running turn that can be steered, else queues.
  wait     t3_thread_wait: wait for a run (default: the latest) to end,
           repeating the call past the server's wait cap. With --timeout MS
           it stops after MS and reports waitTimedOut: true.
  diff     a turn's changes (default: the latest turn with a checkpoint;
           --run RUNID for another), or with --full everything the thread
           changed since its first checkpoint, uncaptured changes included:
           per-file stats, then the unified diff. --max-bytes caps the patch
           (default 1 MiB); a cut patch ends with a "# loom: diff truncated" line.

--json prints the tool's structuredContent as JSON on stdout. Waits show
progress on stderr: a spinner on a terminal, else a line every few seconds.
Exit codes: 0 done; 1 a tool failed (stderr: "code: message") or another
error; 2 usage error; 3 no server is running for the state dir.
`;

const COMMON = { "state-dir": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

function positiveInt(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${flag} must be one of ${allowed.join(", ")}, got "${value}"`);
  return value as T;
}

function positionals(command: string, given: readonly string[], names: readonly string[]): string[] {
  if (given.length !== names.length) {
    throw new UsageError(`loom threads ${command} takes ${names.length === 0 ? "no arguments" : names.join(" and ")}, got ${given.length === 0 ? "none" : given.map((g) => JSON.stringify(g)).join(" ")}`);
  }
  return [...given];
}

type Output = (text: string) => void;

/** Connect, run one command, and always close the MCP session. */
async function withServer(stateDir: string | undefined, run: (caller: LoomToolCaller) => Promise<void>): Promise<number> {
  const caller = await connectToLoom(stateDir);
  try {
    await run(caller);
  } finally {
    await caller.close().catch(() => undefined);
  }
  return 0;
}

/** `loom threads <list|launch|read|send|wait> ...`; resolves with the exit code. */
export async function runThreads(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    if (sub === undefined) throw new UsageError(`loom threads needs a command: list, launch, read, send, wait or diff (see loom threads --help)`);
    out(THREADS_HELP);
    return 0;
  }
  const stderr = process.stderr;
  switch (sub) {
    case "list": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, project: { type: "string" }, status: { type: "string" }, limit: { type: "string" }, offset: { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      positionals(sub, args, []);
      const input = {
        projectId: values.project,
        status: oneOf("status", values.status, ThreadListInput.shape.status.unwrap().options),
        limit: positiveInt("limit", values.limit, 1, 100),
        offset: positiveInt("offset", values.offset, 0, Number.MAX_SAFE_INTEGER),
      };
      return withServer(values["state-dir"], async (caller) => {
        const result = await caller.call<ThreadListResult>("t3_thread_list", defined(input));
        out(values.json === true ? formatJson(result) : formatThreadList(result));
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
      positionals(sub, args, []);
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
      const [threadId] = positionals(sub, args, ["ID"]);
      const view = oneOf("view", values.view, ThreadReadInput.shape.view.unwrap().options);
      return withServer(values["state-dir"], async (caller) => {
        const read = await readAll(caller, threadId!, view);
        out(values.json === true ? formatJson(read) : formatTranscript(read));
      });
    }
    case "send": {
      const { values, positionals: args } = parseArgs({ args: [...rest], options: { ...COMMON, mode: { type: "string" } }, allowPositionals: true });
      if (values.help === true) return help(out);
      const [threadId, message] = positionals(sub, args, ["ID", "TEXT"]);
      const mode = oneOf("mode", values.mode, ThreadSendInput.shape.mode.unwrap().options);
      return withServer(values["state-dir"], async (caller) => {
        const sent = await caller.call<ThreadSendResult>("t3_thread_send", defined({ threadId, message, mode }));
        out(values.json === true ? formatJson(sent) : formatSend(sent));
      });
    }
    case "wait": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, run: { type: "string" }, timeout: { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      const [threadId] = positionals(sub, args, ["ID"]);
      const timeoutMs = positiveInt("timeout", values.timeout, 0, 3_600_000);
      return withServer(values["state-dir"], async (caller) => {
        const waited = await waitForRun(caller, { threadId: threadId!, runId: values.run, timeoutMs }, stderr);
        out(values.json === true ? formatJson(waited) : formatWait(waited));
      });
    }
    case "diff": {
      const { values, positionals: args } = parseArgs({
        args: [...rest],
        options: { ...COMMON, run: { type: "string" }, full: { type: "boolean" }, "max-bytes": { type: "string" } },
        allowPositionals: true,
      });
      if (values.help === true) return help(out);
      const [threadId] = positionals(sub, args, ["ID"]);
      if (values.full === true && values.run !== undefined) throw new UsageError("--run and --full do not go together: --full diffs the whole thread");
      const maxBytes = positiveInt("max-bytes", values["max-bytes"], 1, MAX_DIFF_BYTES);
      const api = OwnerApi.connect(values["state-dir"]);
      const path = `/api/orchestration/threads/${encodeURIComponent(threadId!)}/${values.full === true ? "full-diff" : "turn-diff"}`;
      const diff = await api.get<ThreadDiffOutput>(path, { runId: values.run, maxBytes: maxBytes === undefined ? undefined : String(maxBytes) });
      out(values.json === true ? formatJson(diff) : formatDiff(diff));
      return 0;
    }
    default:
      throw new UsageError(`unknown threads command "${sub}" (see loom threads --help)`);
  }
}

function help(out: Output): number {
  out(THREADS_HELP);
  return 0;
}

/** Leave out undefined fields: the tools' schemas are strict about what is present. */
function defined<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
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
