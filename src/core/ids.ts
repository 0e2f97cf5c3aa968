/**
 * Id allocation and derivation (spec 004 §2.2). `allocate` mints
 * `prefix:uuidv4` ids for app-owned entities; `derive` builds deterministic
 * ids from provider ids so a replayed provider stream yields the same ids.
 * The uuid source is injected: core/ performs no I/O and reads no clock.
 */
export const EntityPrefix = {
  thread: "thread",
  run: "run",
  runAttempt: "run-attempt",
  node: "node",
  subagent: "subagent",
  providerSession: "provider-session",
  providerThread: "provider-thread",
  providerTurn: "provider-turn",
  turnItem: "turn-item",
  message: "message",
  plan: "plan",
  runtimeRequest: "runtime-request",
  checkpointScope: "checkpoint-scope",
  checkpoint: "checkpoint",
  contextHandoff: "context-handoff",
  contextTransfer: "context-transfer",
  event: "event",
} as const;
export type EntityKind = keyof typeof EntityPrefix;
export const ENTITY_KINDS = Object.keys(EntityPrefix) as EntityKind[];

export type UuidSource = () => string;
export type Allocate = { readonly [K in EntityKind]: () => string };

export function makeAllocate(uuid: UuidSource): Allocate {
  const entries = ENTITY_KINDS.map((kind) => [kind, () => `${EntityPrefix[kind]}:${uuid()}`] as const);
  return Object.fromEntries(entries) as unknown as Allocate;
}
