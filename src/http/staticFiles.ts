import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";
import { type ContentCoding, MIN_COMPRESSED_BYTES, acceptEncodingOf, encodeBody, negotiateCoding } from "./compression.js";
import type { RouteHandler } from "./http.js";

/** Content types by extension; anything else is served as bytes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * What the page may load: its own scripts and styles, and connections (HTTP
 * and its WebSocket) to its own origin only.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export interface StaticFilesOptions {
  /** The built app (dist/ui). */
  readonly root: string;
  /** Paths that are never files: the API, MCP, health. */
  readonly reserved: (path: string) => boolean;
}

interface LoadedFile {
  readonly body: Buffer;
  readonly etag: string;
  readonly mtimeMs: number;
  /** The body in each coding asked for so far, compressed once. */
  readonly encoded: Map<ContentCoding, Buffer>;
}

/**
 * Serves a built single-page app: GET and HEAD only, files under `root`;
 * any other path that looks like a page (no extension) gets index.html so
 * the app's own routes survive a reload. Vite's content-hashed files under
 * /assets/ are cached for a year; everything else is revalidated (ETag).
 */
export function staticFiles(options: StaticFilesOptions): RouteHandler {
  const root = normalize(options.root);
  const cache = new Map<string, LoadedFile>();
  const load = (file: string): LoadedFile | null => {
    let mtimeMs: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) return null;
      mtimeMs = stat.mtimeMs;
    } catch {
      return null;
    }
    const cached = cache.get(file);
    if (cached !== undefined && cached.mtimeMs === mtimeMs) return cached;
    const body = readFileSync(file);
    const loaded = { body, mtimeMs, encoded: new Map<ContentCoding, Buffer>(), etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
    cache.set(file, loaded);
    return loaded;
  };
  return (req, res, url) => {
    const path = url.pathname;
    if ((req.method !== "GET" && req.method !== "HEAD") || options.reserved(path)) return Promise.resolve(false);
    let file = resolveInside(root, path);
    if (file === null) return Promise.resolve(false);
    let loaded = load(file);
    if (loaded === null && extname(path) === "") {
      file = join(root, "index.html");
      loaded = load(file);
      if (loaded === null && existsSync(root) === false) {
        const body = "The web UI is not built. Run `npm run build` in the Loom checkout, then reload.\n";
        res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
        res.end(body);
        return Promise.resolve(true);
      }
    }
    if (loaded === null) return Promise.resolve(false);
    const immutable = path.startsWith("/assets/");
    const headers: Record<string, string> = {
      "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      etag: loaded.etag,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    };
    if (extname(file) === ".html") {
      headers["content-security-policy"] = CONTENT_SECURITY_POLICY;
      headers["x-frame-options"] = "DENY";
    }
    if (req.headers["if-none-match"] === loaded.etag) {
      res.writeHead(304, headers);
      res.end();
      return Promise.resolve(true);
    }
    headers.vary = "Accept-Encoding";
    const coding = loaded.body.length < MIN_COMPRESSED_BYTES ? "identity" : negotiateCoding(acceptEncodingOf(req));
    let body = loaded.body;
    if (coding !== "identity") {
      body = loaded.encoded.get(coding) ?? encodeBody(loaded.body, coding);
      loaded.encoded.set(coding, body);
      headers["content-encoding"] = coding;
    }
    headers["content-length"] = String(body.length);
    res.writeHead(200, headers);
    res.end(req.method === "HEAD" ? undefined : body);
    return Promise.resolve(true);
  };
}

/** The file a URL path names under root, or null when it would leave root or is malformed. */
function resolveInside(root: string, path: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes("\0")) return null;
  const file = normalize(join(root, decoded === "/" ? "index.html" : decoded));
  return file === root || file.startsWith(root.endsWith(sep) ? root : `${root}${sep}`) ? file : null;
}
