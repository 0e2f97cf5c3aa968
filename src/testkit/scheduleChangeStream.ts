/**
 * A client of `GET /api/schedules/changes` (docs/schedules.md): opens the
 * stream with the owner's token, resolves once the server says it is live,
 * and reads the `changed` events' sequences as they arrive.
 */
export class ScheduleChangeStream {
  private text = "";

  private constructor(
    private readonly reader: ReadableStreamDefaultReader<string>,
    private readonly abort: AbortController,
  ) {}

  static async open(serverUrl: string, ownerToken: string): Promise<ScheduleChangeStream> {
    const abort = new AbortController();
    const res = await fetch(`${serverUrl}/api/schedules/changes`, { headers: { authorization: `Bearer ${ownerToken}` }, signal: abort.signal });
    if (res.status !== 200) throw new Error(`the change stream answered ${res.status}: ${await res.text()}`);
    if (res.headers.get("content-type") !== "text/event-stream; charset=utf-8") throw new Error(`the change stream is ${res.headers.get("content-type")}`);
    const stream = new ScheduleChangeStream(res.body!.pipeThrough(new TextDecoderStream()).getReader(), abort);
    // The server writes this comment once its feed is live: every later change reaches the stream.
    while (!stream.text.includes(": scheduled task changes")) await stream.readMore();
    return stream;
  }

  /** Read until the stream holds `count` changed events; all their sequences so far. */
  async changed(count: number): Promise<number[]> {
    for (;;) {
      const sequences = [...this.text.matchAll(/event: changed\ndata: (\{.*\})\n\n/g)].map((m) => (JSON.parse(m[1]!) as { sequence: number }).sequence);
      if (sequences.length >= count) return sequences;
      await this.readMore();
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async readMore(): Promise<void> {
    const chunk = await this.reader.read();
    if (chunk.done) throw new Error(`the change stream ended: ${this.text}`);
    this.text += chunk.value;
  }
}
