import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ProviderDriver } from "../adapter.js";
import { claudeDriver } from "../claude/driver.js";
import { codexDriver } from "../codex/driver.js";
import { cursorDriver } from "../cursor/driver.js";
import { opencodeDriver } from "../opencode/driver.js";
import { createPiDriver } from "../pi/driver.js";
import { scriptedDriver } from "../scripted/driver.js";

/**
 * Every driver's docs page lists exactly the options its schema accepts: the
 * first column of the page's `| option | default | meaning |` table is
 * checked against the keys of the driver's `optionsSchema`.
 */

const REPO = join(import.meta.dirname, "..", "..", "..");

const PAGES: readonly (readonly [ProviderDriver, string])[] = [
  [scriptedDriver, "docs/scripted-driver.md"],
  [codexDriver, "docs/providers/codex.md"],
  [claudeDriver, "docs/providers/claude.md"],
  [opencodeDriver, "docs/providers/opencode.md"],
  [createPiDriver(), "docs/providers/pi.md"],
  [cursorDriver, "docs/providers/cursor.md"],
];

/** The backticked names in the first column of the table whose header starts with `| option |`. */
function documentedOptions(markdown: string): string[] {
  const lines = markdown.split("\n");
  const header = lines.findIndex((line) => /^\|\s*option\s*\|/.test(line));
  if (header === -1) throw new Error("no `| option | ... |` table");
  const names: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const cell = line.split("|")[1] ?? "";
    for (const match of cell.matchAll(/`([^`]+)`/g)) names.push(match[1]!);
  }
  return names;
}

describe("driver options docs", () => {
  for (const [driver, page] of PAGES) {
    it(`${page} documents exactly the ${driver.driver} driver's options`, () => {
      const documented = documentedOptions(readFileSync(join(REPO, page), "utf8"));
      expect([...documented].sort()).toEqual(Object.keys(driver.optionsSchema.shape).sort());
    });
  }

  it("reads a table's first column and stops at its end", () => {
    const page = "intro\n\n| option | default | meaning |\n|---|---|---|\n| `a` | `1` | x |\n| `b`, `c` | none | y `z` |\n\n| option | other |\n| `d` | |";
    expect(documentedOptions(page)).toEqual(["a", "b", "c"]);
  });
});
