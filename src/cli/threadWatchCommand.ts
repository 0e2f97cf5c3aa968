import { parseArgs } from "node:util";
import { LoomWsClient } from "../client/loomWsClient.js";
import { bearerWebSocket } from "../client/nodeWebSocket.js";
import type { WireError } from "../client/wireErrors.js";
import { BOUNDED_SNAPSHOT_LIMITS } from "../contracts/wire/projections.js";
import { COMMON, type Output, positionals, positiveInt } from "./args.js";
import { findRunningServer } from "./runningServer.js";
import { ExitCode, ToolFailedError } from "./errors.js";
import { OwnerApi } from "./ownerApi.js";
import { WatchPrinter } from "./watchOutput.js";

export const THREAD_WATCH_USAGE = "  loom threads watch ID [--last N] [--json]";

export const THREAD_WATCH_HELP = `  watch    follow the thread live over the WebSocket: its newest --last
           items (default 20), then items as they arrive, assistant text as
           it streams, command output as it runs, run status changes. After a
           lost connection (a server restart) it reconnects and resumes where
           it was, nothing missed or repeated. Ctrl-C stops it (exit 0); it
           also ends when the thread is deleted. --json prints every wire
           update as one JSON line (command output as
           {"kind":"commandOutput","outputStreamId","update"}).
`;

const DEFAULT_LAST = 20;

/** Signals that end a watch cleanly; injectable so tests of the function need no real signal. */
export interface WatchStop {
  onStop(stop: () => void): () => void;
}

const processSignals: WatchStop = {
  onStop(stop) {
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    return () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    };
  },
};

/** `loom threads watch ID`: resolves with the exit code once stopped, the thread is gone, or the stream fails. */
export async function runThreadWatch(rest: readonly string[], out: Output, err: Output = (t) => process.stderr.write(t), signals: WatchStop = processSignals): Promise<number> {
  const { values, positionals: args } = parseArgs({ args: [...rest], options: { ...COMMON, last: { type: "string" } }, allowPositionals: true });
  if (values.help === true) {
    out(`Usage:\n${THREAD_WATCH_USAGE}\n\n${THREAD_WATCH_HELP}`);
    return ExitCode.ok;
  }
  const [threadRef] = positionals("threads", "watch", args, ["ID"]);
  const last = positiveInt("last", values.last, 1, BOUNDED_SNAPSHOT_LIMITS.maxTurnItems) ?? DEFAULT_LAST;
  const json = values.json === true;
  const server = findRunningServer(values["state-dir"]);
  const threadId = await new OwnerApi(server.info.url, server.token, server.stateDir).resolveThread(threadRef!);

  let lost = false;
  const client = await LoomWsClient.connect({
    url: server.info.url,
    connect: bearerWebSocket(server.token),
    reconnectDelayMs: { min: 100, max: 2_000 },
    onConnectionChange: (state) => {
      if (state === "reconnecting" && !lost) err("loom: connection lost, reconnecting…\n");
      if (state === "open" && lost) err("loom: reconnected\n");
      lost = state === "reconnecting";
    },
  });
  const printer = new WatchPrinter();
  const outputs = new Set<string>();

  const ended = new Promise<number>((resolve) => {
    const fail = (error: WireError): void => resolve(reportFailure(error, err));
    const followOutput = (outputStreamId: string): void => {
      if (outputs.has(outputStreamId)) return;
      outputs.add(outputStreamId);
      client.subscribe(
        "orchestration.subscribeCommandOutput",
        { threadId, outputStreamId },
        {
          next: (update) => out(json ? `${JSON.stringify({ kind: "commandOutput", outputStreamId, update })}\n` : printer.output(outputStreamId, update)),
          // A stream that cannot be followed (gone already) leaves the item's own preview; the watch goes on.
          error: () => outputs.delete(outputStreamId),
          complete: () => outputs.delete(outputStreamId),
        },
      );
    };
    client.subscribe(
      "orchestration.subscribeThread",
      { threadId, turnItemLimit: last },
      {
        next: (update) => {
          out(json ? `${JSON.stringify(update)}\n` : printer.update(update));
          if (update.kind === "output") followOutput(update.outputStreamId);
        },
        error: fail,
        complete: () => resolve(ExitCode.ok),
      },
    );
  });
  let off: () => void = () => undefined;
  const stopped = new Promise<number>((resolve) => {
    off = signals.onStop(() => resolve(ExitCode.ok));
  });
  try {
    return await Promise.race([ended, stopped]);
  } finally {
    off();
    await client.close();
    if (!json) out(printer.finish());
  }
}

function reportFailure(error: WireError, err: Output): number {
  const failure = new ToolFailedError("orchestration.subscribeThread", error.failure.code, error.failure.message);
  err(`${failure.message}\n`);
  return ExitCode.failure;
}
