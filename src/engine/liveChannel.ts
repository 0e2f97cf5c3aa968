/**
 * The in-memory live channel (DESIGN invariant 14: streaming is not history).
 * Assistant text deltas and command output go from the provider sessions to
 * subscribers here and never into the event log; the log records the item
 * when it completes. Nothing here survives a restart, and memory is bounded:
 * each command output stream keeps a tail of at most `tailChars` characters,
 * and at most `maxStreams` streams are kept (the oldest ended ones go first).
 */

/** Live messages about one thread, in the order the provider produced them. */
export type LiveThreadMessage =
  | { readonly kind: "delta"; readonly threadId: string; readonly runId: string; readonly itemId: string; readonly text: string }
  /** The first output chunk of a command: its stream exists from now on (`command`: its command line, when the provider told it). */
  | { readonly kind: "output"; readonly threadId: string; readonly runId: string; readonly itemId: string; readonly outputStreamId: string; readonly command: string | null };

export type LiveThreadListener = (message: LiveThreadMessage) => void;

/** A command output stream as a late subscriber sees it. */
export interface OutputTail {
  readonly threadId: string;
  readonly runId: string;
  readonly itemId: string;
  /** Character offset of `text` in the whole output. */
  readonly offset: number;
  readonly text: string;
  /** Output before `offset` was dropped to keep the tail bounded. */
  readonly truncated: boolean;
  readonly ended: boolean;
}

export type OutputEvent = { readonly kind: "chunk"; readonly offset: number; readonly text: string } | { readonly kind: "end" };
export type OutputListener = (event: OutputEvent) => void;

interface OutputStream {
  readonly threadId: string;
  readonly runId: string;
  readonly itemId: string;
  readonly command: string | null;
  /** Retained tail and its offset in the whole output. */
  tail: string;
  tailOffset: number;
  ended: boolean;
  readonly listeners: Set<OutputListener>;
}

export interface LiveChannelOptions {
  /** Characters of output retained per stream. Default 64 KiB. */
  readonly tailChars?: number;
  /** Streams retained at once. Default 256. */
  readonly maxStreams?: number;
  /** Where a listener's exception goes; it never reaches the publisher. */
  readonly onListenerError?: (error: unknown) => void;
}

export const DEFAULT_OUTPUT_TAIL_CHARS = 64 * 1024;
export const DEFAULT_MAX_OUTPUT_STREAMS = 256;

export class LiveChannel {
  private readonly threadListeners = new Map<string, Set<LiveThreadListener>>();
  /** Insertion order is age order: eviction takes the oldest. */
  private readonly streams = new Map<string, OutputStream>();
  private readonly tailChars: number;
  private readonly maxStreams: number;
  private readonly onListenerError: (error: unknown) => void;

  constructor(options: LiveChannelOptions = {}) {
    this.tailChars = Math.max(1, options.tailChars ?? DEFAULT_OUTPUT_TAIL_CHARS);
    this.maxStreams = Math.max(1, options.maxStreams ?? DEFAULT_MAX_OUTPUT_STREAMS);
    this.onListenerError = options.onListenerError ?? ((error) => console.error("loom: live listener failed", error));
  }

  /** Hear the thread's live messages from now on; returns the unsubscribe function. */
  subscribeThread(threadId: string, listener: LiveThreadListener): () => void {
    let set = this.threadListeners.get(threadId);
    if (set === undefined) {
      set = new Set();
      this.threadListeners.set(threadId, set);
    }
    set.add(listener);
    return () => {
      const current = this.threadListeners.get(threadId);
      current?.delete(listener);
      if (current?.size === 0) this.threadListeners.delete(threadId);
    };
  }

  publishDelta(message: { readonly threadId: string; readonly runId: string; readonly itemId: string; readonly text: string }): void {
    this.toThread({ kind: "delta", ...message });
  }

  /** Append a chunk of a command's output; the first chunk opens the stream and tells the thread's listeners. */
  appendOutput(chunk: { readonly threadId: string; readonly runId: string; readonly itemId: string; readonly outputStreamId: string; readonly text: string; readonly command?: string }): void {
    if (chunk.text === "") return;
    let stream = this.streams.get(chunk.outputStreamId);
    if (stream?.ended === true) return;
    if (stream === undefined) {
      const command = chunk.command ?? null;
      stream = { threadId: chunk.threadId, runId: chunk.runId, itemId: chunk.itemId, command, tail: "", tailOffset: 0, ended: false, listeners: new Set() };
      this.streams.set(chunk.outputStreamId, stream);
      this.evict();
      this.toThread({ kind: "output", threadId: chunk.threadId, runId: chunk.runId, itemId: chunk.itemId, outputStreamId: chunk.outputStreamId, command });
    }
    const offset = stream.tailOffset + stream.tail.length;
    stream.tail += chunk.text;
    if (stream.tail.length > this.tailChars) {
      const drop = stream.tail.length - this.tailChars;
      stream.tail = stream.tail.slice(drop);
      stream.tailOffset += drop;
    }
    this.toOutput(stream, { kind: "chunk", offset, text: chunk.text });
  }

  /** The command finished: listeners get `end`, and the tail stays for late subscribers until evicted. */
  endOutput(outputStreamId: string): void {
    const stream = this.streams.get(outputStreamId);
    if (stream === undefined || stream.ended) return;
    stream.ended = true;
    this.toOutput(stream, { kind: "end" });
    stream.listeners.clear();
  }

  /**
   * The retained tail from `fromOffset` (or from the start of the tail) and,
   * atomically with it, every later chunk; null when the stream is unknown
   * (never streamed, or evicted). An ended stream gets no listener.
   */
  followOutput(outputStreamId: string, fromOffset: number, listener: OutputListener): { readonly tail: OutputTail; close(): void } | null {
    const stream = this.streams.get(outputStreamId);
    if (stream === undefined) return null;
    const start = Math.max(fromOffset, stream.tailOffset);
    const end = stream.tailOffset + stream.tail.length;
    const tail: OutputTail = {
      threadId: stream.threadId,
      runId: stream.runId,
      itemId: stream.itemId,
      offset: Math.min(start, end),
      text: stream.tail.slice(Math.min(start, end) - stream.tailOffset),
      truncated: fromOffset < stream.tailOffset,
      ended: stream.ended,
    };
    if (!stream.ended) stream.listeners.add(listener);
    return { tail, close: () => stream.listeners.delete(listener) };
  }

  /**
   * The run ended: every output stream of it still open ends too, so no
   * reader follows a command its turn no longer runs (a provider that never
   * reported the command finished, an interrupt, a released session).
   */
  endRunOutputs(runId: string): void {
    for (const [outputStreamId, stream] of this.streams) {
      if (stream.runId === runId && !stream.ended) this.endOutput(outputStreamId);
    }
  }

  /** The thread's command output streams that have not ended, oldest first (a new subscriber learns of them). */
  runningOutputs(threadId: string): { runId: string; itemId: string; outputStreamId: string; command: string | null }[] {
    const out: { runId: string; itemId: string; outputStreamId: string; command: string | null }[] = [];
    for (const [outputStreamId, stream] of this.streams) {
      if (stream.threadId === threadId && !stream.ended) out.push({ runId: stream.runId, itemId: stream.itemId, outputStreamId, command: stream.command });
    }
    return out;
  }

  /** How many output streams are retained (for tests of the bound). */
  get retainedStreams(): number {
    return this.streams.size;
  }

  private evict(): void {
    while (this.streams.size > this.maxStreams) {
      let victim: string | undefined;
      for (const [id, stream] of this.streams) {
        if (stream.ended) {
          victim = id;
          break;
        }
      }
      victim ??= this.streams.keys().next().value;
      if (victim === undefined) return;
      const stream = this.streams.get(victim)!;
      this.streams.delete(victim);
      if (!stream.ended) this.toOutput(stream, { kind: "end" });
    }
  }

  private toThread(message: LiveThreadMessage): void {
    const listeners = this.threadListeners.get(message.threadId);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  private toOutput(stream: OutputStream, event: OutputEvent): void {
    for (const listener of [...stream.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
