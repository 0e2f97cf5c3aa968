import type { SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";

/**
 * The streaming input of one `query()` (the transport concern): the session
 * pushes a user message for every turn start and steer, and the SDK pulls
 * them. Each message carries a uuid that Claude Code echoes in the result
 * message of the turn that consumed it (`user_message_uuids`).
 */
export class UserMessageStream implements AsyncIterable<SDKUserMessage> {
  private readonly queue: SDKUserMessage[] = [];
  private wake: (() => void) | null = null;
  private closed = false;

  push(text: string, uuid: string): void {
    if (this.closed) return;
    this.queue.push({
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      uuid: uuid as SDKUserMessage["uuid"],
    });
    this.signal();
  }

  /** Ends the stream once the queued messages are read; Claude Code then exits. */
  close(): void {
    this.closed = true;
    this.signal();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
