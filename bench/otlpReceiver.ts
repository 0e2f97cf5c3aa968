import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The OTLP/HTTP receiver of bench/telemetryBench.ts, in its own process as a
 * collector is: it reads every export's body, answers 200 and counts
 * requests and bytes. Forked with an IPC channel: it sends its URL once
 * listening, and answers "counts" with { requests, bytes }.
 */
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on("data", (chunk: Buffer) => (bytes += chunk.length));
  req.on("end", () => {
    requests += 1;
    res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
});
server.listen(0, "127.0.0.1", () => {
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.on("message", (message) => {
  if (message === "counts") process.send?.({ requests, bytes });
  else if (message === "close") server.close(() => process.exit(0));
});
