import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OpencodeStartError, launchOpencodeServer, serveArgs } from "./serverProcess.js";

describe("launchOpencodeServer", () => {
  it("reports a missing executable as not installed (a real spawn of a path that does not exist)", async () => {
    const command = join(tmpdir(), "no-such-opencode-executable");
    const started = launchOpencodeServer({ command, args: serveArgs(), env: process.env, cwd: tmpdir(), startupTimeoutMs: 10_000, secrets: [] });
    await expect(started).rejects.toBeInstanceOf(OpencodeStartError);
    await expect(started).rejects.toMatchObject({ notInstalled: true });
  });
});
