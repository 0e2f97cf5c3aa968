import type { Options, Query, SDKMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import type { QueryFunction } from "../session.js";

/**
 * A stand-in for the SDK's `query()` for session tests: it reads the
 * streamed user messages like Claude Code does and yields whatever the test
 * tells it to, so turn attribution, steering, interrupts and crashes can be
 * driven message by message.
 */
export class FakeQuery {
  readonly received: SDKUserMessage[] = [];
  readonly interrupts: number[] = [];
  /** Task ids the session asked to stop (Query.stopTask). */
  readonly stoppedTasks: string[] = [];
  closed = false;
  private readonly outbox: (SDKMessage | { readonly end: Error | null })[] = [];
  private wake: (() => void) | null = null;
  private receivedListeners: (() => void)[] = [];

  constructor(
    readonly options: Options,
    prompt: AsyncIterable<SDKUserMessage>,
    private readonly initFailure: Error | null,
  ) {
    void (async () => {
      for await (const message of prompt) {
        this.received.push(message);
        for (const listener of this.receivedListeners.splice(0)) listener();
      }
    })();
  }

  /** Resolves once `count` user messages were read from the prompt. */
  async waitForReceived(count: number): Promise<SDKUserMessage> {
    while (this.received.length < count) await new Promise<void>((resolve) => this.receivedListeners.push(resolve));
    return this.received[count - 1]!;
  }

  /** Queue messages for the consumer. */
  send(...messages: SDKMessage[]): void {
    this.outbox.push(...messages);
    this.signal();
  }

  /** End the message stream, as a process exit does (with an error: a crash). */
  end(error: Error | null = null): void {
    this.outbox.push({ end: error });
    this.signal();
  }

  asQuery(): Query {
    const generator = this.messages();
    return Object.assign(generator, {
      interrupt: () => {
        this.interrupts.push(Date.now());
        return Promise.resolve(undefined);
      },
      stopTask: (taskId: string) => {
        this.stoppedTasks.push(taskId);
        return Promise.resolve();
      },
      initializationResult: () => (this.initFailure === null ? Promise.resolve({}) : Promise.reject(this.initFailure)),
      close: () => {
        this.closed = true;
        this.signal();
      },
    }) as unknown as Query;
  }

  private async *messages(): AsyncGenerator<SDKMessage, void> {
    for (;;) {
      const next = this.outbox.shift();
      if (next === undefined) {
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      if ("end" in next) {
        if (next.end !== null) throw next.end;
        return;
      }
      yield next;
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

export class FakeClaude {
  readonly queries: FakeQuery[] = [];
  initFailure: Error | null = null;

  readonly query: QueryFunction = ({ prompt, options }) => {
    const fake = new FakeQuery(options ?? {}, prompt, this.initFailure);
    this.queries.push(fake);
    return fake.asQuery();
  };

  get last(): FakeQuery {
    const last = this.queries.at(-1);
    if (last === undefined) throw new Error("no query was started");
    return last;
  }
}

/** A fixture's messages with the recorded turn (and steer) uuids replaced by the ones the session sent. */
export function withUuids(messages: readonly SDKMessage[], replacements: Readonly<Record<string, string>>): SDKMessage[] {
  let text = JSON.stringify(messages);
  for (const [from, to] of Object.entries(replacements)) text = text.replaceAll(from, to);
  return JSON.parse(text) as SDKMessage[];
}
