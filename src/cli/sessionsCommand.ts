import { parseArgs } from "node:util";
import type { SessionListResult, SessionReleaseResult } from "../app/sessions.js";
import { COMMON, type Output, positionals, withServer } from "./args.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";

/**
 * `loom sessions`: the agent sessions the running server holds, and releasing
 * one, over the owner HTTP routes (GET /api/sessions, POST
 * /api/sessions/:id/release; docs/cli.md).
 */
export const SESSIONS_USAGE = `  loom sessions list [--json]
  loom sessions release ID [--json]`;

export const SESSIONS_HELP = `Usage:
${SESSIONS_USAGE}

  list     every open agent session: session id, thread, provider instance,
           what it is doing (a run, queued runs, or idle and for how long).
  release  end one session and its agent process now; a run still on it ends
           interrupted. The thread's next message opens a new session, which
           continues the agent's conversation where the driver can resume.
           ID is the session id, its thread's id, or a unique prefix of either.

Warm sessions (a provider instance's pool, docs/warm-pools.md) are listed
after them: started ahead of need, no thread and no credential yet.

Idle sessions are released on their own after sessions.idleMs (default 2
minutes; docs/configuration.md). Both take --state-dir DIR and --json. Exit
codes: 0 done; 1 the server refused (stderr: "code: message"); 2 usage error;
3 no server is running for the state dir.
`;

function formatSessions(list: SessionListResult): string {
  const warm = (list.warm ?? []).map((w) => `${w.warmSessionId}\n  warm: ${w.providerInstanceId} (${w.driver}), since ${w.openedAt}, no thread yet`);
  if (list.sessions.length === 0) return warm.length === 0 ? "no open sessions\n" : `no open sessions\n${warm.join("\n")}\n`;
  const lines = list.sessions.map((s) => {
    const doing = s.activeRunId !== null ? `running ${s.activeRunId}` : s.queuedRuns > 0 ? `${s.queuedRuns} queued` : s.idleMs === null ? "idle" : `idle ${Math.round(s.idleMs / 1000)} s`;
    const where = s.heldHere ? "" : " (held by another node)";
    return `${s.providerSessionId}\n  thread: ${s.threadId} "${s.threadTitle}"\n  ${s.providerInstanceId} (${s.driver})${s.resumed ? ", resumed" : ""}${s.fromPool ? ", from the pool" : ""}, since ${s.startedAt}: ${doing}${where}`;
  });
  return `${[...lines, ...warm].join("\n")}\n`;
}

export async function runSessions(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError("loom sessions needs a command: list or release (see loom sessions --help)");
  if (sub === "--help" || sub === "-h" || sub === "help") {
    out(SESSIONS_HELP);
    return 0;
  }
  const { values, positionals: args } = parseArgs({ args: [...rest], options: { ...COMMON }, allowPositionals: true });
  if (values.help === true) {
    out(SESSIONS_HELP);
    return 0;
  }
  switch (sub) {
    case "list": {
      positionals("sessions", sub, args, []);
      return withServer(values["state-dir"], async (caller) => {
        const list = await caller.api.request<SessionListResult>("GET", "/api/sessions");
        out(values.json === true ? formatJson(list) : formatSessions(list));
      });
    }
    case "release": {
      const [ref] = positionals("sessions", sub, args, ["ID"]);
      return withServer(values["state-dir"], async (caller) => {
        const result = await caller.api.request<SessionReleaseResult>("POST", `/api/sessions/${encodeURIComponent(ref!)}/release`);
        const run = result.interruptedRunId === null ? "" : `; run ${result.interruptedRunId} was interrupted`;
        out(values.json === true ? formatJson(result) : `released ${result.providerSessionId} of ${result.threadId}${run}\n`);
      });
    }
    default:
      throw new UsageError(`unknown sessions command "${sub}" (see loom sessions --help)`);
  }
}
