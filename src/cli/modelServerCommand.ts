import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parseRuleScript } from "../modelServer/ruleScript.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";
import { UsageError } from "./errors.js";

export const MODEL_SERVER_USAGE = "  loom model-server [--port N] [--script FILE] [--quiet]";

const HELP = `Usage:
${MODEL_SERVER_USAGE}

Start the scripted model server on 127.0.0.1: a stand-in for the OpenAI
Responses and Chat Completions, Anthropic Messages and Gemini APIs that real
agent CLIs can be pointed at. --port 0 (the default) picks a free port.
FILE is JSON { "rules": [...] } (see docs/model-server.md); without it every
request is answered "OK". Prints {"url": ...} on stdout, one line per request
on stderr (unless --quiet), and runs until SIGINT or SIGTERM.
`;

function readScript(path: string): ReturnType<typeof parseRuleScript> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`--script ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--script ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return parseRuleScript(json);
  } catch (error) {
    throw new UsageError(`--script ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export interface CommandOutput {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const PROCESS_OUTPUT: CommandOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Parse the arguments, start the server and print its `{"url"}` line.
 * Resolves undefined when only help was asked for.
 */
export async function startModelServerCommand(args: readonly string[], output: CommandOutput = PROCESS_OUTPUT): Promise<ModelServer | undefined> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      port: { type: "string" },
      script: { type: "string" },
      quiet: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help === true) {
    output.stdout(HELP);
    return undefined;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  const rules = values.script === undefined ? [] : readScript(values.script);
  const server = await startModelServer({
    port,
    rules,
    log: values.quiet === true ? undefined : (line) => output.stderr(`${line}\n`),
  });
  output.stdout(`${JSON.stringify({ url: server.url })}\n`);
  return server;
}

/** `loom model-server ...` with the arguments after the command name; runs until SIGINT or SIGTERM and resolves with the exit code. */
export async function runModelServer(args: readonly string[]): Promise<number> {
  const server = await startModelServerCommand(args);
  if (server === undefined) return 0;
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`loom model-server: ${signal} received, shutting down\n`);
      resolve();
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
  await server.close();
  return 0;
}
