import type { ProviderSessionRuntime } from "../adapter.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { ItemCompletedEvent, NormalizedProviderEvent, ProviderItem, TurnCompletedEvent } from "../events.js";
import { scriptedDriver } from "./driver.js";

/**
 * A scripted session wired to an event recorder, for tests of this driver
 * and of anything that wants a deterministic agent in-process. Waiting
 * helpers resolve on the recorded events and never poll a clock.
 */

export interface ScriptedHarness {
  readonly session: ProviderSessionRuntime;
  readonly events: NormalizedProviderEvent[];
  /** Items of `runId` in emission order. */
  items(runId: string): ProviderItem[];
  /** Resolves with the run's turn.completed (immediately when it already came). */
  turnEnd(runId: string): Promise<TurnCompletedEvent>;
  /** Resolves with the first item.completed of `runId` that matches. */
  nextItem(runId: string, match: (item: ProviderItem) => boolean): Promise<ItemCompletedEvent>;
  /** Starts a turn and waits for its end. */
  run(runId: string, input: string): Promise<TurnCompletedEvent>;
}

export interface ScriptedHarnessInput {
  readonly cwd: string;
  readonly options?: Readonly<Record<string, unknown>>;
  readonly mcp?: { readonly url: string; readonly token: string } | null;
  readonly signal?: AbortSignal;
}

export function scriptedInstance(options: Readonly<Record<string, unknown>> = {}): ProviderInstanceConfig {
  return { id: "scripted", driver: "scripted", enabled: true, displayName: null, models: null, options };
}

export async function openScriptedHarness(input: ScriptedHarnessInput): Promise<ScriptedHarness> {
  const events: NormalizedProviderEvent[] = [];
  const listeners = new Set<() => void>();
  const session = await scriptedDriver.openSession({
    instance: scriptedInstance(input.options),
    threadId: "thread:test",
    providerSessionId: "provider-session:test",
    cwd: input.cwd,
    runtimeMode: "full-access",
    interactionMode: "default",
    model: null,
    mcp: input.mcp ?? null,
    signal: input.signal,
    onEvent: (event) => {
      events.push(event);
      for (const listener of [...listeners]) listener();
    },
  });

  const waitFor = <T>(find: () => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const check = (): void => {
        const found = find();
        if (found === undefined) return;
        listeners.delete(check);
        resolve(found);
      };
      listeners.add(check);
      check();
    });

  const turnEnd = (runId: string): Promise<TurnCompletedEvent> =>
    waitFor(() => events.find((e): e is TurnCompletedEvent => e.type === "turn.completed" && e.runId === runId));

  return {
    session,
    events,
    items: (runId) => events.flatMap((e) => (e.type === "item.completed" && e.runId === runId ? [e.item] : [])),
    turnEnd,
    nextItem: (runId, match) =>
      waitFor(() =>
        events.find((e): e is ItemCompletedEvent => e.type === "item.completed" && e.runId === runId && match(e.item)),
      ),
    run: async (runId, text) => {
      await session.startTurn({ runId, input: text });
      return turnEnd(runId);
    },
  };
}
