import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Loom's Pi extension on disk (spec 000, "Pi V2": "the adapter writes a
 * T3-owned extension into the server cache"). The source is the bridge
 * module shipped with Loom (bridge/piMcpBridge.js in dist/, .ts when run
 * from source); it is copied to `<cache>/pi-t3-mcp-extension.ts`, which Pi
 * loads with jiti. The copy is rewritten only when it differs, atomically,
 * so sessions starting together never see half a file.
 */

export const EXTENSION_FILE = "pi-t3-mcp-extension.ts";

/** The bridge module next to this one, compiled or not. */
export function bridgeSourcePath(): string {
  for (const name of ["piMcpBridge.js", "piMcpBridge.ts"]) {
    const path = fileURLToPath(new URL(`./bridge/${name}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error("Loom's Pi extension (bridge/piMcpBridge) is missing from this installation");
}

/** Writes the extension into `dir` (created, mode 0700) if needed; returns its path. */
export async function installExtension(dir: string, source: string = bridgeSourcePath()): Promise<string> {
  const text = await readFile(source, "utf8");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, EXTENSION_FILE);
  const current = existsSync(target) ? await readFile(target, "utf8") : null;
  if (current === text) return target;
  const temp = join(dir, `.${EXTENSION_FILE}.${randomUUID()}.tmp`);
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, target);
  return target;
}
