import { right } from "./right.js";

/** One half of an import cycle that lint must report (src/testkit/lintGuard.test.ts). */
export function left(depth: number): number {
  return depth <= 0 ? 0 : right(depth - 1) + 1;
}
