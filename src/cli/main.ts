#!/usr/bin/env node
import { parseArgs } from "node:util";
import { LOOM_VERSION } from "../version.js";
import { runServe } from "./serve.js";

const HELP = `loom ${LOOM_VERSION} — orchestration server for coding agents

Usage:
  loom serve [--host 127.0.0.1] [--port N] [--state-dir DIR] [--config FILE]
  loom --help
  loom --version

Commands:
  serve     Start the server. --port 0 (the default) picks a free port.
            The state dir defaults to $LOOM_STATE_DIR, else ~/.loom.
            The config defaults to <state-dir>/config.json.

The running server writes <state-dir>/server.json ({ url, mcpUrl, pid, ... })
and keeps its owner token in <state-dir>/owner-token (mode 0600).
`;

export class UsageError extends Error {
  readonly code = "usage";
}

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
  if (command === "serve") {
    const { values } = parseArgs({
      args: [...rest],
      options: {
        host: { type: "string" },
        port: { type: "string" },
        "state-dir": { type: "string" },
        config: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
    if (values.help === true) {
      process.stdout.write(HELP);
      return 0;
    }
    return runServe({ host: values.host, port: values.port, stateDir: values["state-dir"], config: values.config });
  }
  throw new UsageError(`unknown command "${command}" (see loom --help)`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`loom: ${message}\n`);
    process.exitCode = 2;
  },
);
