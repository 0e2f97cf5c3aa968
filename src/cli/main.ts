#!/usr/bin/env node
import { parseArgs } from "node:util";
import { LOOM_VERSION } from "../version.js";
import { UsageError, describeFailure } from "./errors.js";
import { MODEL_SERVER_USAGE, runModelServer } from "./modelServerCommand.js";
import { OPEN_USAGE, runOpen } from "./openCommand.js";
import { PROVIDERS_USAGE, runProviders } from "./providersCommand.js";
import { runServe } from "./serve.js";
import { runNodes } from "./nodesCommand.js";
import { THREADS_USAGE, runThreads } from "./threadsCommand.js";
import { WORKTREES_USAGE, runWorktrees } from "./worktreesCommand.js";
import { MERGES_USAGE, runMerges } from "./mergesCommand.js";
import { REQUESTS_USAGE, runRequests } from "./requestsCommand.js";
import { TASKS_USAGE, runTasks } from "./tasksCommand.js";
import { BUDGET_USAGE, runBudget } from "./budgetCommand.js";
import { MCP_CONFIG_USAGE, runMcpConfig } from "./mcpConfigCommand.js";
import { DOCTOR_USAGE, runDoctor } from "./doctorCommand.js";
import { SESSIONS_USAGE, runSessions } from "./sessionsCommand.js";
import { TRACE_USAGE, runTrace } from "./traceCommand.js";
import { LOG_LEVELS } from "../config/config.js";

const HELP = `loom ${LOOM_VERSION} — orchestration server for coding agents

Usage:
  loom serve [--host 127.0.0.1] [--port N] [--state-dir DIR] [--config FILE] [--database postgres://...] [--log-level LEVEL]
${THREADS_USAGE}
${MODEL_SERVER_USAGE}
${PROVIDERS_USAGE}
${WORKTREES_USAGE}
${MERGES_USAGE}
${OPEN_USAGE}
${REQUESTS_USAGE}
${TASKS_USAGE}
${BUDGET_USAGE}
${MCP_CONFIG_USAGE}
${DOCTOR_USAGE}
${SESSIONS_USAGE}
${TRACE_USAGE}
  loom nodes [--state-dir DIR] [--json]
  loom --help
  loom --version

Commands:
  serve     Start the server. --port 0 (the default) picks a free port.
            The state dir defaults to $LOOM_STATE_DIR, else ~/.loom.
            The config defaults to <state-dir>/config.json. --database
            postgres://... shares one PostgreSQL database with other nodes
            (docs/postgres.md); the default is SQLite in the state dir.
            The server logs to <state-dir>/logs/loom.log (rotated);
            --log-level ${LOG_LEVELS.join("|")} overrides the config's log.level.
  threads   List, launch, read, send to and wait for threads on the running
            server, over MCP as its owner. Each takes --state-dir DIR to find
            the server and --json to print the tool's result as JSON.
            Details: loom threads --help.
  model-server
            A scripted model server on 127.0.0.1 that answers the OpenAI,
            Anthropic and Gemini APIs from a rules file, for demos and tests
            of real agent CLIs without a model account (docs/model-server.md).
  providers Search the ACP registry, prepare a registry agent as a provider
            instance, list instances and prepared agents (loom providers --help).
  worktrees List the Loom-managed git worktrees of the running server, or
            prune those of deleted threads (loom worktrees --help).
  merges    The merge queues: worktree children's branches merged into their
            parent one at a time, each with its status and log; cancelling a
            queued one (loom merges --help).
  open      Print a one-time login link for the running server's web UI and
            open it in the desktop's browser when there is one (--no-browser:
            print only). The link signs one browser in once (docs/ui.md).
  requests  The inbox: every pending approval and question across threads,
            and answering one (loom requests --help).
  tasks     A delegated task's status, or cancelling it (loom tasks --help).
  budget    Raise a budget; a tree paused on it goes on (loom budget --help).
  mcp-config
            The snippet that mounts this Loom in an agent's MCP config
            (server key t3-code, token by environment variable).
  doctor    Check Node, SQLite, the state dir, the config, every provider's
            executable and credentials, and the running server; print fixes.
  sessions  The agent sessions the server holds, and releasing one
            (loom sessions --help).
  trace     A tree's spans as a waterfall (name, duration, status, tokens,
            cost), written as OTLP/JSON, or sent to an OTLP collector
            (loom trace --help; docs/telemetry.md).
  nodes     The nodes sharing the running server's database: heartbeat age,
            status (live, stopped, lost), the sessions and leases each holds.

The running server writes <state-dir>/server.json ({ url, mcpUrl, pid, ... })
and keeps its owner token in <state-dir>/owner-token (mode 0600).

Exit codes: 0 done; 1 a tool failed (stderr: "code: message") or another
error; 2 usage error; 3 no server is running for the state dir; 4 a wait's
--timeout passed first. Ids may be given as unique prefixes (docs/cli.md).
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return command === undefined ? 1 : 0;
  }
  if (command === "--version" || command === "-v") {
    process.stdout.write(`${LOOM_VERSION}\n`);
    return 0;
  }
  if (command === "threads") return runThreads(rest);
  if (command === "model-server") return runModelServer(rest);
  if (command === "providers") return runProviders(rest);
  if (command === "worktrees") return runWorktrees(rest);
  if (command === "merges") return runMerges(rest);
  if (command === "open") return runOpen(rest);
  if (command === "requests") return runRequests(rest);
  if (command === "tasks") return runTasks(rest);
  if (command === "budget") return runBudget(rest);
  if (command === "mcp-config") return runMcpConfig(rest);
  if (command === "doctor") return runDoctor(rest);
  if (command === "nodes") return runNodes(rest);
  if (command === "sessions") return runSessions(rest);
  if (command === "trace") return runTrace(rest);
  if (command === "serve") {
    const { values } = parseArgs({
      args: [...rest],
      options: {
        host: { type: "string" },
        port: { type: "string" },
        "state-dir": { type: "string" },
        config: { type: "string" },
        database: { type: "string" },
        "log-level": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
    if (values.help === true) {
      process.stdout.write(HELP);
      return 0;
    }
    return runServe({ host: values.host, port: values.port, stateDir: values["state-dir"], config: values.config, database: values.database, logLevel: values["log-level"] });
  }
  throw new UsageError(`unknown command "${command}" (see loom --help)`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    const failure = describeFailure(error);
    process.stderr.write(`${failure.line}\n`);
    process.exitCode = failure.exitCode;
  },
);
