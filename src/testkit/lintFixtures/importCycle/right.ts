import { left } from "./left.js";

/** The other half of the import cycle in left.ts. */
export function right(depth: number): number {
  return depth <= 0 ? 0 : left(depth - 1) + 1;
}
