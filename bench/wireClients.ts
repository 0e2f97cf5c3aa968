/**
 * WebSocket clients in their own process for bench/wireBench.ts, so their
 * reads and parsing run beside the server, as a browser's or a CLI's would,
 * instead of in the server's event loop. Forked with an IPC channel; the job
 * comes as JSON in LOOM_WIRE_CLIENTS (it holds the owner token):
 *
 * - `{ mode: "subscribe", url, token, threadId, clients }`: connect that many
 *   `LoomWsClient`s, subscribe each to the thread, send `{ type: "ready" }`;
 *   then for every `thread.meta-updated` event, once every client has it,
 *   send `{ type: "heard", title, times, frameBytes }`: each client's receive
 *   time (`process.hrtime.bigint()`, a clock every process on the machine
 *   shares) as a decimal string.
 * - `{ mode: "echo", url, count, warmup, size }`: round trips of `size`-byte
 *   frames to a bare `ws` echo server; send `{ type: "echo", samples }` (ms).
 *
 * Exits when the parent disconnects.
 */
import { WebSocket } from "ws";
import { LoomWsClient } from "../src/client/loomWsClient.js";
import { bearerWebSocket } from "../src/client/nodeWebSocket.js";
import type { ThreadStreamUpdate } from "../src/contracts/wire/projections.js";

interface SubscribeJob {
  readonly mode: "subscribe";
  readonly url: string;
  readonly token: string;
  readonly threadId: string;
  readonly clients: number;
}

interface EchoJob {
  readonly mode: "echo";
  readonly url: string;
  readonly count: number;
  readonly warmup: number;
  readonly size: number;
}

function send(message: unknown): void {
  process.send?.(message);
}

async function subscribe(job: SubscribeJob): Promise<void> {
  const heard = new Map<string, string[]>();
  for (let c = 0; c < job.clients; c++) {
    const client = await LoomWsClient.connect({ url: job.url, connect: bearerWebSocket(job.token) });
    await new Promise<void>((ready) => {
      client.subscribe("orchestration.subscribeThread", { threadId: job.threadId }, {
        next: (update: ThreadStreamUpdate) => {
          if (update.kind === "snapshot") ready();
          if (update.kind !== "event") return;
          const at = process.hrtime.bigint();
          const title = (update.event.data as { thread?: { title?: string } }).thread?.title;
          if (title === undefined) return;
          const times = heard.get(title) ?? [];
          times.push(at.toString());
          heard.set(title, times);
          if (times.length === job.clients) {
            heard.delete(title);
            send({ type: "heard", title, times, frameBytes: JSON.stringify({ type: "stream", id: "1", update }).length });
          }
        },
      });
    });
  }
  send({ type: "ready" });
}

async function echo(job: EchoJob): Promise<void> {
  const client = new WebSocket(job.url);
  await new Promise<void>((resolve) => client.once("open", () => resolve()));
  const payload = "x".repeat(job.size);
  const samples: number[] = [];
  for (let i = 0; i < job.warmup + job.count; i++) {
    const start = process.hrtime.bigint();
    await new Promise<void>((resolve) => {
      client.once("message", () => resolve());
      client.send(payload);
    });
    if (i >= job.warmup) samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  client.close();
  send({ type: "echo", samples });
}

const job = JSON.parse(process.env.LOOM_WIRE_CLIENTS ?? "{}") as SubscribeJob | EchoJob;
process.on("disconnect", () => process.exit(0));
await (job.mode === "subscribe" ? subscribe(job) : echo(job));
