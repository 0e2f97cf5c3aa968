import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";

/**
 * The README's curl example runs as written against a real `loom serve`
 * whose state dir is $LOOM_STATE_DIR (not ~/.loom).
 */

const README = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
let stateDir: string;
let serve: ServeProcess;

/** The README's shell block that calls the HTTP API with curl. */
function curlExample(): string {
  const block = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.includes("curl "));
  if (block === undefined) throw new Error("README has no curl example");
  return block;
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-readme-"));
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "demo", root: stateDir }] }));
  const { LOOM_STATE_DIR: _ignored, ...env } = process.env;
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], env);
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
});

describe("the README's curl example", () => {
  it("finds the server through LOOM_STATE_DIR and creates a thread", () => {
    const home = mkdtempSync(join(tmpdir(), "loom-readme-home-"));
    try {
      const output = execFileSync("bash", ["-euo", "pipefail", "-c", curlExample()], { env: { ...process.env, LOOM_STATE_DIR: stateDir, HOME: home }, encoding: "utf8" });
      const [created, snapshot] = output.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(created).toMatchObject({ status: "accepted", commandType: "thread.create" });
      expect((snapshot!.threads as { title: string }[]).map((t) => t.title)).toContain("Hello");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
