import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { OtlpReceiver } from "../testkit/otlpReceiver.js";

/**
 * `loom trace THREAD` against a real `loom serve` with export off: the
 * waterfall, the OTLP/JSON file, an export after the fact to an OTLP
 * receiver on 127.0.0.1 in both encodings, and its usage errors.
 */
let stateDir: string;
let serve: ServeProcess;
let receiver: OtlpReceiver;

function loom(...args: string[]): Promise<Ran> {
  return runLoom([...args, "--state-dir", stateDir]);
}

const script = (...steps: unknown[]): string => JSON.stringify({ script: steps });

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-trace-"));
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "demo", root: stateDir }] }));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], cliEnv());
  receiver = await OtlpReceiver.start();
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  await receiver.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("loom trace", () => {
  it("prints a waterfall, writes OTLP/JSON and exports to a collector after the fact", { timeout: 120_000 }, async () => {
    const launched = await loom("threads", "launch", "--message", script({ run: "echo hi" }, { say: "done" }), "--title", "Traced", "--wait", "--json");
    expect(launched.status, launched.stderr).toBe(0);
    const { threadId, runId } = JSON.parse(launched.stdout) as { threadId: string; runId: string };

    const text = await loom("trace", threadId.slice("thread:".length, "thread:".length + 8));
    expect(text.status, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^trace [0-9a-f]{32} \\(root ${threadId}\\): 3 spans, `));
    expect(lines[1]).toMatch(/^invoke_agent scripted +\|█+ *\| +\S+ (ms|s) {2}ok {2}\d+→\d+ tok$/);
    expect(lines.slice(2).map((line) => line.split("|")[0]!.trimEnd()).sort()).toEqual(["  attempt 1", "  execute_tool shell"]);

    const file = join(stateDir, "trace.json");
    const written = await loom("trace", threadId, "--json", file);
    expect(written.status, written.stderr).toBe(0);
    const body = JSON.parse(readFileSync(file, "utf8")) as { resourceSpans: { scopeSpans: { spans: { name: string; spanId: string }[] }[] }[] };
    expect(body.resourceSpans[0]!.scopeSpans[0]!.spans.map((span) => span.name).sort()).toEqual(["attempt 1", "execute_tool shell", "invoke_agent scripted"]);

    for (const protocol of ["http/json", "http/protobuf"]) {
      const before = receiver.spans.length;
      const sent = await loom("trace", threadId, "--otlp", receiver.url, "--protocol", protocol);
      expect(sent.status, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(new RegExp(`^sent 3 span\\(s\\) of trace [0-9a-f]{32} to ${receiver.url}/v1/traces\\n$`));
      const arrived = receiver.spans.slice(before);
      expect(arrived.map((span) => span.encoding)).toEqual(Array(3).fill(protocol === "http/json" ? "json" : "protobuf"));
      expect(arrived.find((span) => span.name === "invoke_agent scripted")?.attributes["loom.run.id"]).toBe(runId);
    }
    // The same spans both times: ids derived from Loom's.
    expect(new Set(receiver.spans.map((span) => span.spanId)).size).toBe(3);
  });

  it("refuses bad input with a usage error and an unknown thread with the server's code", async () => {
    expect(await loom("trace")).toMatchObject({ status: 2, stderr: "loom: loom trace takes THREAD, got none\n" });
    expect(await loom("trace", "x", "--otlp", "ftp://collector")).toMatchObject({ status: 2, stderr: 'loom: --otlp must be an http:// or https:// URL, got "ftp://collector"\n' });
    expect(await loom("trace", "x", "--protocol", "http/json")).toMatchObject({ status: 2, stderr: "loom: --protocol goes with --otlp URL\n" });
    const unknown = await loom("trace", "thread:nope");
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("thread_not_found");
  });
});
