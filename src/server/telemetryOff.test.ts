import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

/**
 * Export off costs nothing (docs/telemetry.md): a built server started in a
 * process of its own, without an endpoint, has loaded none of the
 * OpenTelemetry SDK's modules (they are CommonJS, so Node's module cache
 * lists every one that was loaded) and holds no live exporter; with an
 * endpoint it has loaded the sampler's and follows the log, and its export
 * worker (which loads the encoders in a thread of its own) runs.
 */

/** The built server (`npm run build`), as `loom serve` runs it. */
const SERVER = new URL("../../dist/server/loomServer.js", import.meta.url).href;

/** Start the built server on `dir`, report which SDK packages are loaded and whether a live exporter exists, and stop it. */
const PROBE = `
import { createRequire } from "node:module";
const { startLoomServer } = await import(process.env.LOOM_SERVER_MODULE);
const server = await startLoomServer({ stateDir: process.env.LOOM_PROBE_DIR, cwd: process.env.LOOM_PROBE_DIR, configPath: process.env.LOOM_PROBE_CONFIG });
const loaded = Object.keys(createRequire(import.meta.url).cache).map((path) => /node_modules\\/@opentelemetry\\/([^/]+)\\//.exec(path)?.[1]).filter(Boolean);
const live = server.traces.live !== null;
const worker = server.traces.live?.exportWorker.running ?? false;
await server.close();
console.log(JSON.stringify({ loaded: [...new Set(loaded)].sort(), live, worker }));
`;

let dir: string;

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function probe(config: Record<string, unknown>): { loaded: string[]; live: boolean; worker: boolean } {
  dir = mkdtempSync(join(tmpdir(), "loom-otel-off-"));
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("OTEL_")));
  const output = execFileSync(process.execPath, ["--input-type=module", "-e", PROBE], {
    env: { ...env, LOOM_SERVER_MODULE: SERVER, LOOM_PROBE_DIR: dir, LOOM_PROBE_CONFIG: configPath },
    encoding: "utf8",
    timeout: 60_000,
  });
  return JSON.parse(output.trim().split("\n").at(-1)!) as { loaded: string[]; live: boolean; worker: boolean };
}

describe("trace export off", () => {
  it("loads no OpenTelemetry SDK module and opens no live exporter", () => {
    const off = probe({});
    expect(off.live).toBe(false);
    expect(off.worker).toBe(false);
    expect(off.loaded).toEqual([]);
  });

  it("with an endpoint, loads the SDK's sampler and exports live through the export worker", () => {
    const on = probe({ telemetry: { endpoint: "http://127.0.0.1:9" } });
    expect(on.live).toBe(true);
    expect(on.worker).toBe(true);
    expect(on.loaded).toEqual(expect.arrayContaining(["api", "sdk-trace-base"]));
    // The encoders and the HTTP exporter load in the worker, not on the server's thread.
    expect(on.loaded).not.toContain("exporter-trace-otlp-proto");
  });
});
