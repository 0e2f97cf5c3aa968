import { existsSync, readFileSync } from "node:fs";

/**
 * The package version. src/ and dist/ sit one level below package.json; the
 * benchmark build (dist-bench/src/) two levels.
 */
function readPackageVersion(): string {
  for (const relative of ["../package.json", "../../package.json"]) {
    const url = new URL(relative, import.meta.url);
    if (existsSync(url)) return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
  }
  throw new Error(`package.json not found above ${import.meta.url}`);
}

export const LOOM_VERSION: string = readPackageVersion();
