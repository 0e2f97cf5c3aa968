/**
 * The names of spec 004 (§3.1 commands, §3.2 events) that Loom does not
 * implement yet, and what each is. Every other name of the spec has an entry
 * in the command table (commands.ts) or the event table (events.ts); a test
 * (names.test.ts) checks that the tables plus this list are exactly the
 * spec's names. Implementing one moves it from here into its table.
 *
 * parseCommand answers a listed command `unsupported_command` (an internal
 * one `internal_command` to outside clients); a listed event is decoded as
 * unknown, like any name this build does not know.
 */
export const NotImplementedKind = {
  /** A public command of spec 004 §3.1. */
  publicCommand: "public-command",
  /** An internal command of spec 004 §3.1: only the server would send it. */
  internalCommand: "internal-command",
  /** A domain event of spec 004 §3.2. */
  event: "event",
} as const;
export type NotImplementedKind = (typeof NotImplementedKind)[keyof typeof NotImplementedKind];

export interface NotImplementedEntry {
  readonly kind: NotImplementedKind;
  /** What the name stands for in spec 004, and why Loom has no need of it yet. */
  readonly what: string;
}

/** Empty while Loom implements every name of spec 004; a name the spec adds waits here until it is built. */
export const NAMED_NOT_IMPLEMENTED: { readonly [name: string]: NotImplementedEntry } = {};

const entries = NAMED_NOT_IMPLEMENTED;

/** The listed entry for a name, if it is one. */
export function notImplemented(name: string): NotImplementedEntry | undefined {
  return Object.hasOwn(entries, name) ? entries[name] : undefined;
}
