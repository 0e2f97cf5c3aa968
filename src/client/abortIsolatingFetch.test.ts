import { getEventListeners } from "node:events";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { abortIsolatingFetch } from "./abortIsolatingFetch.js";

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/endless") {
      // Stream until the client goes away, as an SSE response does.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      return;
    }
    if (req.url === "/empty") {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("abortIsolatingFetch", () => {
  it("leaves no listener on the shared signal once each body is read, cancelled or absent", async () => {
    const shared = new AbortController();
    for (let i = 0; i < 50; i++) {
      const response = await abortIsolatingFetch(`${url}/n${i}`, { signal: shared.signal });
      expect(await response.json()).toEqual({ path: `/n${i}` });
    }
    const cancelled = await abortIsolatingFetch(`${url}/endless`, { signal: shared.signal });
    await cancelled.body!.cancel();
    const empty = await abortIsolatingFetch(`${url}/empty`, { signal: shared.signal });
    expect(empty.status).toBe(204);
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
  });

  it("keeps the response's status and headers", async () => {
    const response = await abortIsolatingFetch(`${url}/x`, { signal: new AbortController().signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
  });

  it("still aborts a body in flight when the shared signal aborts", async () => {
    const shared = new AbortController();
    const response = await abortIsolatingFetch(`${url}/endless`, { signal: shared.signal });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1);
    shared.abort(new Error("closing"));
    await expect(reader.read()).rejects.toThrow();
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
  });

  it("rejects at once with an already aborted signal", async () => {
    const shared = new AbortController();
    shared.abort(new Error("gone"));
    await expect(abortIsolatingFetch(`${url}/x`, { signal: shared.signal })).rejects.toThrow("gone");
  });
});
