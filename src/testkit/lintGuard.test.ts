import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The lint rules that guard the architecture keep guarding: the repo's own
 * eslint.config.js, through ESLint's Node API, reports the import cycle
 * planted in lintFixtures/importCycle/ (a folder the repo's lint ignores, so
 * `npm run lint` stays green), and its layer table says what the folder
 * table of docs/architecture.md says.
 */

const REPO = join(import.meta.dirname, "..", "..");
const FIXTURES = join(import.meta.dirname, "lintFixtures");

type Layers = Readonly<Record<string, readonly string[] | null>>;

async function lintLayers(): Promise<Layers> {
  const config = (await import(pathToFileURL(join(REPO, "eslint.config.js")).href)) as { LAYERS: Layers };
  return config.LAYERS;
}

/** The `src/<folder>/` rows of the folder table and what each may import, in the doc's order. */
function documentedLayers(folders: readonly string[]): [string, string[] | null][] {
  const doc = readFileSync(join(REPO, "docs", "architecture.md"), "utf8");
  const rows: [string, string[] | null][] = [];
  for (const line of doc.split("\n")) {
    const row = /^\| `src\/([A-Za-z]+)\/` \|.*\| ([^|]+) \|$/.exec(line);
    if (row === null) continue;
    const [, folder = "", mayImport = ""] = row;
    const text = mayImport.trim();
    if (text === "everything") rows.push([folder, null]);
    else if (text === "nothing in src") rows.push([folder, []]);
    else if (text.startsWith("everything but ")) {
      const except = text.slice("everything but ".length).split(", ");
      rows.push([folder, folders.filter((other) => other !== folder && !except.includes(other))]);
    } else rows.push([folder, text.split(", ")]);
  }
  return rows;
}

describe("lint guards", () => {
  it("import-x/no-cycle reports a two-file cycle in TypeScript, in both files", { timeout: 120_000 }, async () => {
    // ignore: false, so the config's ignore of lintFixtures/ does not hide the planted files.
    const eslint = new ESLint({ cwd: REPO, ignore: false });
    const files = ["left.ts", "right.ts"].map((name) => join(FIXTURES, "importCycle", name));
    const results = await eslint.lintFiles(files);
    const found = results.map((result) => ({
      file: result.filePath,
      rules: result.messages.map((message) => message.ruleId),
      fatal: result.messages.filter((message) => message.fatal === true).map((message) => message.message),
    }));
    expect(found).toEqual(files.map((file) => ({ file, rules: ["import-x/no-cycle"], fatal: [] })));
  });

  it("LAYERS in eslint.config.js and the folder table of docs/architecture.md agree, row by row", async () => {
    const layers = await lintLayers();
    const folders = Object.keys(layers);
    const documented = documentedLayers(folders);
    expect(documented.map(([folder]) => folder)).toEqual(folders);
    for (const [folder, mayImport] of documented) {
      const linted = layers[folder] ?? null;
      expect({ folder, mayImport: mayImport === null ? null : [...mayImport].sort() }).toEqual({ folder, mayImport: linted === null ? null : [...linted].sort() });
    }
  });
});
