import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ItemCompletedEvent, NormalizedProviderEvent, ProviderItem, TurnCompletedEvent } from "../../contracts/providerEvents.js";
import type { ProviderSessionRuntime } from "../adapter.js";

/**
 * What the driver contract suite (testSuite.ts) needs from a driver: a way
 * to open a session on the driver's fake, and a way to make that fake do
 * each scenario. The suite calls the session's methods itself and judges
 * the events; the harness only plays the provider's side (a fake process's
 * answer, a recorded transcript, a permission callback), so the suite stays
 * driver-neutral. docs/providers/driver-kit.md explains how to write one.
 */

export interface DriverContractHarness {
  /**
   * Opens a session of the driver under test on its fake. Every event must
   * go to `recorder.onEvent`, untouched. Called once per case.
   */
  open(recorder: ProviderEventRecorder): Promise<DriverContractSubject>;
}

export interface DriverContractSubject {
  readonly session: ProviderSessionRuntime;
  /** The capability record of the instance the session belongs to; the suite expects what it promises. */
  readonly capabilities: ProviderCapabilities;
  /** Start turn `runId`; the fake ends it on its own: at least one item, then turn.completed "completed". */
  startCompletingTurn(runId: string): Promise<void>;
  /** Start turn `runId`; the fake keeps it running until it is steered, interrupted or stopped. */
  startOpenTurn(runId: string): Promise<void>;
  /**
   * Called after `steerTurn({ runId, input: text })` resolved on an open turn:
   * check that `text` reached the fake (it is the suite's only way to know),
   * then make the fake answer and end the turn "completed".
   */
  finishSteeredTurn(runId: string, text: string): Promise<void>;
  /** Called after `interruptTurn` resolved: the fake reports the end if it does not by itself. */
  afterInterrupt(runId: string): Promise<void>;
  /**
   * Start turn `runId`; the fake asks for an approval or for user input
   * (an approval_request or user_input_request item) and waits.
   */
  startAskingTurn(runId: string): Promise<void>;
  /**
   * Called after `respondToRequest` accepted the suite's answer (`{ decision:
   * "accept" }`, or `{ answers: { <question id>: "yes" } }`): the fake goes on
   * and ends the turn "completed". Check here that the answer reached the fake.
   */
  afterAnswer(runId: string): Promise<void>;
  /**
   * Called after `stop()`: the fake tries to deliver more (a late message, a
   * late request), resolving once it did, so the suite can check that no event
   * followed. Omit it when nothing can reach a stopped session (its process is gone).
   */
  afterStop?(): Promise<void>;
  /** Releases what the fake holds (temp dirs, fake processes). The session is already stopped. */
  dispose(): Promise<void>;
}

/** How long the suite waits for an event before it says what it saw: only a very slow machine gets there. */
export const EVENT_DEADLINE_MS = 20_000;

/**
 * Records a session's events and lets a test wait for one. Waiting resolves
 * on the event itself (listeners, no polling); the deadline only turns a hang
 * into a message listing what did arrive. After `seal()`, events still go to
 * `events` but are also kept in `late`: a stopped session must have none.
 */
export class ProviderEventRecorder {
  readonly events: NormalizedProviderEvent[] = [];
  readonly late: NormalizedProviderEvent[] = [];
  private readonly listeners = new Set<() => void>();
  private sealed = false;

  readonly onEvent = (event: NormalizedProviderEvent): void => {
    this.events.push(event);
    if (this.sealed) this.late.push(event);
    for (const listener of [...this.listeners]) listener();
  };

  /** From now on, every event is a late one. */
  seal(): void {
    this.sealed = true;
  }

  ofRun(runId: string): NormalizedProviderEvent[] {
    return this.events.filter((event) => event.runId === runId);
  }

  /** Resolves with the first value `find` returns, checked now and after every event. */
  waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): void => {
        const found = find();
        if (found === undefined) return;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`no ${what} within ${EVENT_DEADLINE_MS} ms; events: ${JSON.stringify(this.events)}`));
      }, EVENT_DEADLINE_MS);
      timer.unref();
      this.listeners.add(check);
      check();
    });
  }

  turnEnd(runId: string): Promise<TurnCompletedEvent> {
    return this.waitFor(() => this.events.find((event): event is TurnCompletedEvent => event.type === "turn.completed" && event.runId === runId), `turn.completed of ${runId}`);
  }

  item(runId: string, match: (item: ProviderItem) => boolean, what = "matching item"): Promise<ItemCompletedEvent> {
    return this.waitFor(
      () => this.events.find((event): event is ItemCompletedEvent => event.type === "item.completed" && event.runId === runId && match(event.item)),
      `${what} of ${runId}`,
    );
  }
}
