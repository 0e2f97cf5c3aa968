import type { IncomingMessage } from "node:http";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** The codings Loom answers with, best first. */
export type ContentCoding = "br" | "gzip" | "identity";

/** Bodies shorter than this are sent as they are: compressing them saves nothing. */
export const MIN_COMPRESSED_BYTES = 1024;

/** Requests whose server sends everything uncompressed (config `wire.compression: false`). */
const IDENTITY_ONLY = new WeakSet<IncomingMessage>();

/** Answer this request uncompressed, whatever its Accept-Encoding offers. */
export function answerUncompressed(req: IncomingMessage): void {
  IDENTITY_ONLY.add(req);
}

/** A peer address on this machine: 127.0.0.0/8, ::1, or IPv4 loopback mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The Accept-Encoding to negotiate with: the request's own, or none once it is to be answered uncompressed. */
export function acceptEncodingOf(req: IncomingMessage | undefined): string | string[] | undefined {
  return req === undefined || IDENTITY_ONLY.has(req) ? undefined : req.headers["accept-encoding"];
}

/**
 * The coding to answer a request with, from its Accept-Encoding: br before
 * gzip at equal weight, a coding with q=0 never, identity when the request
 * names neither (or sends no header).
 */
export function negotiateCoding(header: string | string[] | undefined): ContentCoding {
  if (header === undefined) return "identity";
  const weights = new Map<string, number>();
  for (const part of (Array.isArray(header) ? header.join(",") : header).split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (name === undefined || name === "") continue;
    let q = 1;
    for (const param of params) {
      const match = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(param);
      if (match) q = Number(match[1]);
    }
    weights.set(name, Number.isFinite(q) ? q : 0);
  }
  const weight = (coding: string): number => weights.get(coding) ?? weights.get("*") ?? 0;
  const br = weight("br");
  const gzip = weight("gzip");
  if (br > 0 && br >= gzip) return "br";
  if (gzip > 0) return "gzip";
  return "identity";
}

/** The body in `coding`; brotli at a fast quality, since answers are compressed as they are sent. */
export function encodeBody(body: Buffer, coding: ContentCoding): Buffer {
  if (coding === "br") return brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  if (coding === "gzip") return gzipSync(body, { level: 6 });
  return body;
}

/**
 * The bytes and headers of an answer body for a request's Accept-Encoding:
 * compressed when the client takes br or gzip and the body is at least
 * MIN_COMPRESSED_BYTES, always with `Vary: Accept-Encoding`.
 */
export function negotiatedBody(body: Buffer, acceptEncoding: string | string[] | undefined): { body: Buffer; headers: Record<string, string> } {
  const coding = body.length < MIN_COMPRESSED_BYTES ? "identity" : negotiateCoding(acceptEncoding);
  const encoded = encodeBody(body, coding);
  const headers: Record<string, string> = { vary: "Accept-Encoding", "content-length": String(encoded.length) };
  if (coding !== "identity") headers["content-encoding"] = coding;
  return { body: encoded, headers };
}
