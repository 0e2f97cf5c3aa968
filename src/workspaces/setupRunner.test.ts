import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir, writeFiles } from "../testkit/gitRepo.js";
import { WorkspaceErrorCode } from "./errors.js";
import { type SetupOutputChunk, runSetup } from "./setupRunner.js";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => (dir = tempDir("setup")));
afterEach(() => dir.remove());

/** An AbortController aborted as soon as `marker` appears in the output. */
function abortOn(marker: string): { controller: AbortController; onOutput: (chunk: SetupOutputChunk) => void } {
  const controller = new AbortController();
  let seen = "";
  return {
    controller,
    onOutput: (chunk) => {
      seen += chunk.text;
      if (seen.includes(marker)) controller.abort();
    },
  };
}

describe("runSetup", () => {
  it("streams output chunks and reports success with the output's tail", async () => {
    writeFiles(dir.path, { "package.json": '{"name":"x"}\n' });
    const chunks: SetupOutputChunk[] = [];
    const result = await runSetup({
      cwd: dir.path,
      command: { shell: "printf 'héllo from %s\\n' \"$(basename \"$PWD\")\"; echo warning >&2; test -f package.json" },
      onOutput: (chunk) => chunks.push(chunk),
    });
    expect(result).toMatchObject({ outcome: "succeeded", exitCode: 0, signal: null, outputTruncatedBytes: 0 });
    expect(result.durationMs).toBeGreaterThan(0);
    const stdout = chunks.filter((chunk) => chunk.stream === "stdout").map((chunk) => chunk.text).join("");
    const stderr = chunks.filter((chunk) => chunk.stream === "stderr").map((chunk) => chunk.text).join("");
    expect(stdout).toBe(`héllo from ${dir.path.split("/").at(-1)}\n`);
    expect(stderr).toBe("warning\n");
    expect(result.outputTail).toContain("héllo from");
    expect(result.outputTail).toContain("warning\n");
  });

  it("runs a program with arguments and the given environment", async () => {
    const result = await runSetup({
      cwd: dir.path,
      command: { argv: [process.execPath, "-e", "process.stdout.write(process.env.LOOM_SETUP_PROBE + ' ' + process.cwd())"] },
      env: { LOOM_SETUP_PROBE: "probe" },
    });
    expect(result).toMatchObject({ outcome: "succeeded", outputTail: `probe ${dir.path}` });
  });

  it("reports a failing command with its exit code", async () => {
    const result = await runSetup({ cwd: dir.path, command: { shell: "echo installing; echo 'npm ERR! boom' >&2; exit 3" } });
    expect(result).toMatchObject({ outcome: "failed", exitCode: 3, signal: null });
    expect(result.outputTail).toContain("npm ERR! boom");
  });

  it("stops the whole process group on abort, background children included", async () => {
    const { controller, onOutput } = abortOn("ready");
    const result = await runSetup({
      cwd: dir.path,
      command: { shell: "sleep 60 & echo ready; wait" },
      onOutput,
      signal: controller.signal,
    });
    // Had the background sleep survived, it would hold the output pipe open and this call would not return.
    expect(result).toMatchObject({ outcome: "aborted", exitCode: null, signal: "SIGTERM" });
  });

  it("stops what a finished command left running, so its result is not held up", async () => {
    const result = await runSetup({ cwd: dir.path, command: { shell: "sleep 60 & echo done" } });
    expect(result).toMatchObject({ outcome: "succeeded", exitCode: 0, outputTail: "done\n" });
  });

  it("escalates to SIGKILL when the command ignores SIGTERM", async () => {
    const { controller, onOutput } = abortOn("ready");
    const result = await runSetup({
      cwd: dir.path,
      command: { shell: "trap '' TERM; echo ready; while :; do sleep 1; done" },
      onOutput,
      signal: controller.signal,
      killGraceMs: 100,
    });
    expect(result).toMatchObject({ outcome: "aborted", signal: "SIGKILL" });
  });

  it("stops a command that runs past its timeout", async () => {
    const result = await runSetup({ cwd: dir.path, command: { shell: "echo started; sleep 60" }, timeoutMs: 200 });
    expect(result).toMatchObject({ outcome: "timed_out", exitCode: null, signal: "SIGTERM" });
    expect(result.outputTail).toBe("started\n");
  });

  it("keeps only the tail of long output", async () => {
    const result = await runSetup({
      cwd: dir.path,
      command: { argv: [process.execPath, "-e", "for (let i = 0; i < 5000; i++) console.log('line ' + i)"] },
      tailBytes: 1000,
    });
    expect(Buffer.byteLength(result.outputTail)).toBeLessThanOrEqual(1000);
    expect(result.outputTail.endsWith("line 4999\n")).toBe(true);
    const total = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join("").length;
    expect(result.outputTruncatedBytes + Buffer.byteLength(result.outputTail)).toBe(total);
  });

  it("does not start when already aborted, and types its input errors", async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = join(dir.path, "ran");
    const result = await runSetup({ cwd: dir.path, command: { shell: `touch '${marker}'` }, signal: controller.signal });
    expect(result.outcome).toBe("aborted");
    expect(existsSync(marker)).toBe(false);

    await expect(runSetup({ cwd: dir.path, command: { argv: ["/no/such/program"] } })).rejects.toMatchObject({
      code: WorkspaceErrorCode.setupSpawnFailed,
    });
    await expect(runSetup({ cwd: join(dir.path, "absent"), command: { shell: "true" } })).rejects.toMatchObject({
      code: WorkspaceErrorCode.pathNotFound,
    });
    await expect(runSetup({ cwd: dir.path, command: { shell: "true" }, timeoutMs: 0 })).rejects.toMatchObject({
      code: WorkspaceErrorCode.invalidInput,
    });
  });
});
