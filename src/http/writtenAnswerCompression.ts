import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { type BrotliCompress, type Gzip, constants, createBrotliCompress, createGzip } from "node:zlib";
import { MIN_COMPRESSED_BYTES, acceptEncodingOf, negotiateCoding } from "./compression.js";

/** Answers worth compressing: JSON, and event streams (flushed at every write, so nothing is held back). */
const COMPRESSIBLE = /^(application\/json|text\/event-stream)\b/i;

/**
 * A brotli stream keeps a 256 KiB window (18 bits) instead of the 4 MiB
 * default, and a gzip stream zlib's default 32 KiB: bounded memory per
 * answer in flight.
 */
function compressor(coding: "br" | "gzip"): { stream: BrotliCompress | Gzip; flush: () => void } {
  if (coding === "br") {
    const stream = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 18 } });
    return { stream, flush: () => stream.flush(constants.BROTLI_OPERATION_FLUSH) };
  }
  const stream = createGzip({ level: 6 });
  return { stream, flush: () => stream.flush(constants.Z_SYNC_FLUSH) };
}

/**
 * Compress an answer that other code writes to `res` through writeHead,
 * write and end (the MCP SDK's transport writes its own answers): by the
 * request's Accept-Encoding, only JSON and event streams, never a body known
 * to be under MIN_COMPRESSED_BYTES. Every write is flushed through at once,
 * so a streamed event reaches the client when it is written; a write
 * answers false while the compressor is full, and the answer emits 'drain'
 * when it takes more.
 */
export function compressWrittenAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader("vary", "Accept-Encoding");
  const coding = negotiateCoding(acceptEncodingOf(req));
  if (coding === "identity") return;
  // The originals, called with whatever arguments the writer passed.
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let active: ReturnType<typeof compressor> | null = null;

  const begin = (status: number, headers: OutgoingHttpHeaders): void => {
    const header = (name: string) => headers[name] ?? res.getHeader(name);
    const length = header("content-length");
    const small = length !== undefined && Number(length) < MIN_COMPRESSED_BYTES;
    if (status === 204 || status === 304 || small || header("content-encoding") !== undefined || !COMPRESSIBLE.test(String(header("content-type") ?? ""))) return;
    delete headers["content-length"];
    res.removeHeader("content-length");
    headers["content-encoding"] = coding;
    active = compressor(coding);
    const { stream } = active;
    stream.on("data", (chunk: Buffer) => {
      if (!write(chunk)) {
        stream.pause();
        res.once("drain", () => stream.resume());
      }
    });
    // A writer told to wait (write returned false) waits for 'drain' on the answer: it comes once the compressor takes more.
    stream.on("drain", () => res.emit("drain"));
    stream.on("end", () => end());
    stream.on("error", (error) => res.destroy(error));
    res.once("close", () => stream.destroy());
  };

  res.writeHead = ((status: number, ...rest: unknown[]) => {
    // Only the (status, headers object) form is compressed; a status message or raw header array passes through as it is.
    if (rest.length <= 1 && (rest[0] === undefined || (typeof rest[0] === "object" && rest[0] !== null && !Array.isArray(rest[0])))) {
      const headers = { ...(rest[0] as OutgoingHttpHeaders | undefined) };
      begin(status, headers);
      return writeHead(status, headers);
    }
    return writeHead(status, ...rest);
  });

  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (active === null) return write(chunk, ...rest);
    const ok = (active.stream.write as (...args: unknown[]) => boolean)(chunk, ...rest);
    active.flush();
    return ok;
  }) as ServerResponse["write"];

  res.end = ((...args: unknown[]) => {
    if (active === null) return end(...args);
    const callback = args.find((arg) => typeof arg === "function") as (() => void) | undefined;
    if (callback !== undefined) res.once("finish", callback);
    const chunk = typeof args[0] === "function" ? undefined : args[0];
    if (chunk === undefined || chunk === null) active.stream.end();
    else (active.stream.end as (...a: unknown[]) => void)(chunk, ...args.slice(1).filter((arg) => typeof arg === "string"));
    return res;
  }) as ServerResponse["end"];
}
