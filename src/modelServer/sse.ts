/** One server-sent event: `event: NAME` (when named) and one `data:` line. */
export interface SseEvent {
  readonly event?: string;
  readonly data: unknown;
}

/** The wire form of events; `data` strings are sent as is (e.g. "[DONE]"), anything else as JSON. */
export function formatSse(events: readonly SseEvent[]): string {
  return events
    .map((event) => {
      const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
      return `${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${data}\n\n`;
    })
    .join("");
}

/** Parse an SSE body back into events (tests and clients); JSON data is decoded. */
export function parseSse(body: string): { event: string | undefined; data: unknown }[] {
  return body
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      const text = data.join("\n");
      try {
        return { event, data: JSON.parse(text) as unknown };
      } catch {
        return { event, data: text };
      }
    });
}

/** Split text into a few deltas so clients exercise their accumulation. */
export function textChunks(text: string, size = 24): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

/** A rough token count: clients only display it. */
export function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}
