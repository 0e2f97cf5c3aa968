#!/usr/bin/env node
/**
 * Regenerates src/providers/codex/generated/ from the installed codex binary
 * (`npm run generate:codex`). `codex app-server generate-ts` writes
 * extensionless relative imports ("./ThreadItem"); this project compiles with
 * NodeNext resolution, which needs "./ThreadItem.js" (or "./v2/index.js" for a
 * folder), so the specifiers are rewritten after generation. The generated
 * types themselves are left exactly as codex wrote them.
 *
 * Usage: node src/providers/codex/generateTypes.mjs [path/to/codex]
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "generated");
const root = resolve(here, "../../..");
const codex = process.argv[2] ?? join(root, "node_modules", ".bin", "codex");

rmSync(out, { recursive: true, force: true });
execFileSync(codex, ["app-server", "generate-ts", "--out", out], { stdio: "inherit" });

const SPECIFIER = /(from\s+")(\.{1,2}\/[^"]*)(")/g;

function withExtension(file, specifier) {
  if (/\.(js|mjs|cjs|json)$/.test(specifier)) return specifier;
  const target = resolve(dirname(file), specifier);
  if (existsSync(target) && statSync(target).isDirectory()) return `${specifier}/index.js`;
  return `${specifier}.js`;
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walk(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

let rewritten = 0;
for (const file of walk(out)) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(SPECIFIER, (_match, head, specifier, tail) => `${head}${withExtension(file, specifier)}${tail}`);
  if (next !== text) {
    writeFileSync(file, next);
    rewritten += 1;
  }
}
const version = execFileSync(codex, ["--version"], { encoding: "utf8" }).trim();
writeFileSync(join(out, "VERSION"), `${version}\n`);
console.log(`codex protocol types (${version}) written to ${out}; import paths fixed in ${rewritten} files`);
