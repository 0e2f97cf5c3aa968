import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * What the npm package ships is what users run: the build's own tsc
 * (tsconfig.build.json) emits into `dist/` of a scratch copy of the package
 * (package.json and README.md), and `npm pack --dry-run --json` lists it.
 * No test harness may be among the files: not src/testkit, no `testing/`
 * fake, no test or contract suite. tsc emits every module a shipped module
 * imports, excluded or not, so a product file that imports a harness puts
 * it in the list and fails here. The emit skips type checking (`--noCheck`,
 * `npm run typecheck` does that), which leaves the set of files unchanged;
 * the UI build (Vite, dist/ui) holds no source module and is left out.
 */

const REPO = join(import.meta.dirname, "..", "..");
const TSC = join(REPO, "node_modules", "typescript", "bin", "tsc");
const HARNESS = [/(^|\/)testkit\//, /(^|\/)testing\//, /\.test\./, /(^|\/)testSuite[^/]*$/];

let scratch: string;
let files: string[];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "loom-package-files-"));
  execFileSync(process.execPath, [TSC, "-p", join(REPO, "tsconfig.build.json"), "--outDir", join(scratch, "dist"), "--noCheck"], { cwd: REPO, stdio: "pipe" });
  for (const file of ["package.json", "README.md"]) copyFileSync(join(REPO, file), join(scratch, file));
  const packed = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: scratch, encoding: "utf8" })) as { files: { path: string }[] }[];
  files = packed[0]!.files.map((file) => file.path);
}, 300_000);

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe("the npm package's files", () => {
  it("hold what users run: the CLI, the server, the scripted driver and the scripted model server", () => {
    for (const file of ["dist/cli/main.js", "dist/server/loomServer.js", "dist/providers/scripted/driver.js", "dist/modelServer/server.js", "dist/providers/kit/jsonRpcProcess.js", "README.md", "package.json"]) {
      expect(files, file).toContain(file);
    }
  });

  it("hold no test harness: no testkit/, no testing/, no *.test.* and no testSuite file", () => {
    expect(files.filter((file) => HARNESS.some((pattern) => pattern.test(file)))).toEqual([]);
  });
});
