import type { LoomToolCaller } from "./client.js";
import { connectToLoom } from "./client.js";
import { UsageError } from "./errors.js";

/** Argument helpers shared by the `loom` subcommands that talk to a running server. */

export const COMMON = { "state-dir": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

export type Output = (text: string) => void;

export function positiveInt(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${flag} must be one of ${allowed.join(", ")}, got "${value}"`);
  return value as T;
}

/** Exactly the named positional arguments, or a usage error naming them. */
export function positionals(family: string, command: string, given: readonly string[], names: readonly string[]): string[] {
  if (given.length !== names.length) {
    throw new UsageError(`loom ${family} ${command} takes ${names.length === 0 ? "no arguments" : names.join(" and ")}, got ${given.length === 0 ? "none" : given.map((g) => JSON.stringify(g)).join(" ")}`);
  }
  return [...given];
}

/** Connect, run one command, and always close the MCP session; resolves with the command's exit code (0 unless it says otherwise). */
export async function withServer(stateDir: string | undefined, run: (caller: LoomToolCaller) => Promise<number | void>): Promise<number> {
  const caller = await connectToLoom(stateDir);
  try {
    return (await run(caller)) ?? 0;
  } finally {
    await caller.close().catch(() => undefined);
  }
}

/** Leave out undefined fields: the tools' schemas are strict about what is present. */
export function defined<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}
