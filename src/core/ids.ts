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

/**
 * Join an id from a plain prefix and segments, each segment
 * encodeURIComponent-encoded so it holds no ":". Splitting the id on ":"
 * therefore recovers the segments exactly, which makes every `derive` format
 * below injective: distinct inputs never yield the same id.
 */
export function joinId(prefix: string, ...parts: readonly (string | number)[]): string {
  return [prefix, ...parts.map((part) => encodeURIComponent(String(part)))].join(":");
}

/** A segment that is present only when given; null and undefined both mean absent. */
type Optional = string | null | undefined;

function labelled(label: string, value: Optional): string[] {
  return value === null || value === undefined ? [] : [label, value];
}

function ordinalSegment(name: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return String(value);
}

/**
 * Deterministic ids (spec 004 §2.2). Provider-originated entities derive
 * their id from the provider's own ids, so replaying a provider stream yields
 * the same ids without a lookup table. Loom's idempotent ingress derives ids
 * from a caller's clientRequestId, so a retried call names the same work.
 * Label segments ("provider", "native-thread", ...) are literal; every
 * variable segment is encoded. An empty string is a present segment.
 */
export const derive = {
  /** thread:provider:<driver>[:provider-instance:<instanceId>]:native-thread:<nativeThreadId> */
  threadFromProviderThread(input: { driver: string; providerInstanceId?: Optional; nativeThreadId: string }): string {
    return joinId(
      EntityPrefix.thread,
      ...["provider", input.driver],
      ...labelled("provider-instance", input.providerInstanceId),
      ...["native-thread", input.nativeThreadId],
    );
  },

  /** run:thread:<threadId>:ordinal:<ordinal> */
  runFromThreadOrdinal(input: { threadId: string; ordinal: number }): string {
    return joinId(EntityPrefix.run, "thread", input.threadId, "ordinal", ordinalSegment("ordinal", input.ordinal));
  },

  /** run-attempt:run:<runId>:attempt:<attemptOrdinal> */
  runAttemptFromOrdinal(input: { runId: string; attemptOrdinal: number }): string {
    return joinId(
      EntityPrefix.runAttempt,
      "run",
      input.runId,
      "attempt",
      ordinalSegment("attemptOrdinal", input.attemptOrdinal),
    );
  },

  /** provider-session:provider-instance:<instanceId>:shared */
  providerSessionShared(input: { providerInstanceId: string }): string {
    return joinId(EntityPrefix.providerSession, "provider-instance", input.providerInstanceId, "shared");
  },

  /**
   * provider-session:provider-instance:<instanceId>:thread:<threadId>[:native-session:<id>|:native-thread:<id>]
   * At most one native id may be given; both is a programming error and throws.
   */
  providerSessionForThread(input: {
    providerInstanceId: string;
    threadId: string;
    nativeSessionId?: Optional;
    nativeThreadId?: Optional;
  }): string {
    const hasSession = input.nativeSessionId !== null && input.nativeSessionId !== undefined;
    const hasThread = input.nativeThreadId !== null && input.nativeThreadId !== undefined;
    if (hasSession && hasThread) {
      throw new Error("providerSessionForThread takes nativeSessionId or nativeThreadId, not both");
    }
    return joinId(
      EntityPrefix.providerSession,
      ...["provider-instance", input.providerInstanceId],
      ...["thread", input.threadId],
      ...labelled("native-session", input.nativeSessionId),
      ...labelled("native-thread", input.nativeThreadId),
    );
  },

  /** provider-thread:provider:<driver>[:provider-instance:<id>][:thread:<id>]:native-thread:<id> */
  providerThread(input: {
    driver: string;
    providerInstanceId?: Optional;
    threadId?: Optional;
    nativeThreadId: string;
  }): string {
    return joinId(
      EntityPrefix.providerThread,
      ...["provider", input.driver],
      ...labelled("provider-instance", input.providerInstanceId),
      ...labelled("thread", input.threadId),
      ...["native-thread", input.nativeThreadId],
    );
  },

  /** provider-turn:provider-thread:<providerThreadId>:native-turn:<nativeTurnId> */
  providerTurn(input: { providerThreadId: string; nativeTurnId: string }): string {
    return joinId(EntityPrefix.providerTurn, "provider-thread", input.providerThreadId, "native-turn", input.nativeTurnId);
  },

  /** node:provider:<driver>[:provider-turn:<id>]:native-item:<id> */
  nodeFromProviderItem(input: { driver: string; providerTurnId?: Optional; nativeItemId: string }): string {
    return joinId(
      EntityPrefix.node,
      ...["provider", input.driver],
      ...labelled("provider-turn", input.providerTurnId),
      ...["native-item", input.nativeItemId],
    );
  },

  /** subagent:provider:<driver>[:thread:<id>]:native-task:<id> */
  subagentFromProviderTask(input: { driver: string; threadId?: Optional; nativeTaskId: string }): string {
    return joinId(
      EntityPrefix.subagent,
      ...["provider", input.driver],
      ...labelled("thread", input.threadId),
      ...["native-task", input.nativeTaskId],
    );
  },

  /** turn-item:provider:<driver>[:provider-turn:<id>]:native-item:<id>[:segment:<segment>] */
  turnItemFromProviderItem(input: ProviderItemInput): string {
    return providerItemId(EntityPrefix.turnItem, input);
  },

  /**
   * output-stream:turn-item:<turnItemId> — a command_execution item's live
   * output (docs/wire.md, subscribeCommandOutput). Derived from the item, so
   * the session streaming the output and the decider recording the item name
   * the same stream without sharing state.
   */
  outputStreamOfItem(input: { turnItemId: string }): string {
    return joinId("output-stream", "turn-item", input.turnItemId);
  },

  /** message:provider:<driver>[:provider-turn:<id>]:native-item:<id>[:segment:<segment>] */
  messageFromProviderItem(input: ProviderItemInput): string {
    return providerItemId(EntityPrefix.message, input);
  },

  /**
   * command:client-request:<scope>:tool:<tool>:request:<clientRequestId>
   * `scope` is whoever owns the clientRequestId namespace (e.g. the provider
   * session), so two callers reusing one clientRequestId stay apart.
   */
  commandFromClientRequest(input: { scope: string; tool: string; clientRequestId: string }): string {
    return joinId("command", "client-request", input.scope, "tool", input.tool, "request", input.clientRequestId);
  },

  /** thread:client-request:<scope>:request:<clientRequestId>:index:<index> — `index` numbers the threads one call creates. */
  threadFromClientRequest(input: { scope: string; clientRequestId: string; index: number }): string {
    return joinId(
      EntityPrefix.thread,
      ...["client-request", input.scope],
      ...["request", input.clientRequestId],
      ...["index", ordinalSegment("index", input.index)],
    );
  },

  /** message:client-request:<scope>:request:<clientRequestId> */
  messageFromClientRequest(input: { scope: string; clientRequestId: string }): string {
    return joinId(EntityPrefix.message, "client-request", input.scope, "request", input.clientRequestId);
  },
} as const;

export type Derive = typeof derive;
export type DeriveFunctionName = keyof Derive;

interface ProviderItemInput {
  readonly driver: string;
  readonly providerTurnId?: Optional;
  readonly nativeItemId: string;
  /** Splits one provider item into several ids, e.g. one per message part. */
  readonly segment?: Optional;
}

function providerItemId(prefix: string, input: ProviderItemInput): string {
  return joinId(
    prefix,
    ...["provider", input.driver],
    ...labelled("provider-turn", input.providerTurnId),
    ...["native-item", input.nativeItemId],
    ...labelled("segment", input.segment),
  );
}
