import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServe, waitForExit } from "../testkit/loomProcess.js";

/**
 * The published package: `npm pack` of this build (after `npm run build`),
 * unpacked into a temporary folder, holds everything the server reads at
 * run time, and its `loom` bin starts from an unrelated folder. The packed
 * copy borrows this checkout's node_modules for its dependencies instead of
 * installing them from the registry, which would take minutes.
 */

const REPO = join(import.meta.dirname, "..", "..");
let scratch: string;
let unpacked: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "loom-pack-"));
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch], { cwd: REPO, encoding: "utf8" })) as { filename: string }[];
  execFileSync("tar", ["-xzf", join(scratch, packed[0]!.filename), "-C", scratch]);
  unpacked = join(scratch, "package");
  symlinkSync(join(REPO, "node_modules"), join(unpacked, "node_modules"), "dir");
}, 120_000);

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("is named loom-orchestrator and installs the loom bin", () => {
    const manifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8")) as { name: string; bin: Record<string, string> };
    expect(manifest.name).toBe("loom-orchestrator");
    expect(manifest.bin).toEqual({ loom: "dist/cli/main.js" });
  });

  it("holds what the server reads at run time: the CLI, the built UI and its assets, the Pi bridge", () => {
    for (const file of ["dist/cli/main.js", "dist/server/loomServer.js", "dist/ui/index.html", "dist/providers/pi/bridge/piMcpBridge.js", "README.md"]) {
      expect(existsSync(join(unpacked, file)), file).toBe(true);
    }
    const index = readFileSync(join(unpacked, "dist/ui/index.html"), "utf8");
    const assets = [...index.matchAll(/(?:src|href)="\/?(assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect(existsSync(join(unpacked, "dist/ui", asset)), asset).toBe(true);
  });

  it("runs from an unrelated folder: --version, then serve with the web UI", { timeout: 120_000 }, async () => {
    const elsewhere = join(scratch, "elsewhere");
    mkdirSync(elsewhere);
    const cli = join(unpacked, "dist/cli/main.js");
    const version = execFileSync(process.execPath, [cli, "--version"], { cwd: elsewhere, encoding: "utf8" });
    expect(version.trim()).toBe((JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version);

    const { LOOM_STATE_DIR: _ignored, ...env } = process.env;
    const serve = await spawnServe(["--state-dir", join(scratch, "state"), "--port", "0"], env, { cliPath: cli, cwd: elsewhere });
    try {
      const page = await fetch(`${serve.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<div id=\"root\">");
    } finally {
      serve.child.kill("SIGTERM");
      await waitForExit(serve.child);
    }
  });
});
