import { connect as tcpConnect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { LoomWsClient } from "../client/loomWsClient.js";
import { bearerWebSocket, ticketWebSocket } from "../client/nodeWebSocket.js";
import { WS_PATH, WS_TICKET_PATH } from "../contracts/wire/messages.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { httpClient } from "../testkit/wireClients.js";
import { WsTicketBook } from "./ownerAuth.js";

/**
 * The WebSocket transport itself, against the real server: who may upgrade
 * (owner bearer, single-use ticket, the server's own origin), heartbeats in
 * both directions, and typed errors for frames that are not protocol messages.
 */

let h: LoomHarness;
let wsUrl: string;

beforeAll(async () => {
  // Compression for every client, loopback ones too (the default compresses only for other machines).
  h = await LoomHarness.start({ wsHeartbeatMs: 100, config: { wire: { compression: true } } });
  wsUrl = LoomWsClient.wsUrl(h.server.url);
});

afterAll(async () => {
  await h.close();
});

/** How the server answered an upgrade: opened, or refused with an HTTP status and body before any WebSocket data. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ opened: true; socket: WebSocket } | { opened: false; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => resolve({ opened: true, socket }));
    socket.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ opened: false, status: res.statusCode ?? 0, body }));
    });
    socket.once("error", (error) => reject(error));
  });
}

describe("WebSocket compression", () => {
  it("negotiates permessage-deflate with a capped window", async () => {
    const socket = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${h.ownerToken}` } });
    const opened = new Promise<void>((resolve) => socket.once("open", () => resolve()));
    const negotiated = await new Promise<string>((resolve, reject) => {
      socket.once("upgrade", (res) => resolve(String(res.headers["sec-websocket-extensions"])));
      socket.once("error", reject);
    });
    expect(negotiated).toContain("permessage-deflate");
    expect(negotiated).toContain("server_max_window_bits=13");
    expect(negotiated).toContain("client_max_window_bits=13");
    await opened;
    expect(socket.extensions).toBe("permessage-deflate");
    socket.close();
  });
});

async function refused(url: string, headers: Record<string, string> = {}): Promise<{ status: number; error: { code: string; message: string } }> {
  const answer = await upgrade(url, headers);
  if (answer.opened) {
    answer.socket.close();
    throw new Error("the upgrade was accepted");
  }
  return { status: answer.status, error: (JSON.parse(answer.body) as { error: { code: string; message: string } }).error };
}

async function ticket(): Promise<string> {
  return httpClient(h).wsTicket();
}

/** A raw protocol peer: sends text or binary frames, records every server message, waits on them. */
class RawPeer {
  readonly messages: Record<string, unknown>[] = [];
  private waiters: (() => void)[] = [];
  closeCode: number | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      this.messages.push(JSON.parse((data as Buffer).toString("utf8")) as Record<string, unknown>);
      this.wake();
    });
    socket.on("close", (code) => {
      this.closeCode = code;
      this.wake();
    });
  }

  static async open(): Promise<RawPeer> {
    const answer = await upgrade(wsUrl, { authorization: `Bearer ${h.ownerToken}` });
    if (!answer.opened) throw new Error(`refused: ${answer.status}`);
    return new RawPeer(answer.socket);
  }

  send(frame: string | Buffer): void {
    this.socket.send(frame);
  }

  async next(match: (message: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
    return this.until(() => this.messages.find(match), what);
  }

  /** The first `count` error messages, in arrival order. */
  async errors(count: number): Promise<Record<string, unknown>[]> {
    return this.until(() => {
      const errors = this.messages.filter((m) => m.type === "error");
      return errors.length >= count ? errors.slice(0, count) : undefined;
    }, `${count} errors`);
  }

  async closed(): Promise<number> {
    return this.until(() => this.closeCode ?? undefined, "the socket to close");
  }

  private async until<T>(probe: () => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

describe("who may open the WebSocket", () => {
  it("refuses an upgrade without credentials, or with a wrong token, with 401 before any WebSocket data", async () => {
    const none = await refused(wsUrl);
    expect(none).toEqual({ status: 401, error: { code: "unauthorized", message: "missing or invalid bearer token or ticket" } });
    expect((await refused(wsUrl, { authorization: "Bearer not-the-owner" })).status).toBe(401);
    expect((await refused(`${wsUrl}?ticket=${randomBytes(32).toString("base64url")}`)).status).toBe(401);
  });

  it("refuses another path with 404", async () => {
    const answer = await refused(wsUrl.replace(WS_PATH, "/api/elsewhere"), { authorization: `Bearer ${h.ownerToken}` });
    expect(answer.status).toBe(404);
  });

  it("refuses a browser from another origin with 403, even with the owner token; the server's own origins are accepted", async () => {
    const foreign = await refused(wsUrl, { authorization: `Bearer ${h.ownerToken}`, origin: "http://evil.example" });
    expect(foreign).toMatchObject({ status: 403, error: { code: "forbidden_origin" } });
    const port = new URL(h.server.url).port;
    for (const origin of [h.server.url, `http://localhost:${port}`]) {
      const answer = await upgrade(wsUrl, { authorization: `Bearer ${h.ownerToken}`, origin });
      expect(answer.opened).toBe(true);
      if (answer.opened) answer.socket.close();
    }
    // An origin check happens before a ticket is spent: the refused browser's ticket still works from the right origin.
    const spare = await ticket();
    expect((await refused(`${wsUrl}?ticket=${spare}`, { origin: "http://evil.example" })).status).toBe(403);
    const retried = await upgrade(`${wsUrl}?ticket=${spare}`, { origin: h.server.url });
    expect(retried.opened).toBe(true);
    if (retried.opened) retried.socket.close();
  });

  it("tickets: issued only to the owner over HTTP, each opens one socket once", async () => {
    const anonymous = await fetch(`${h.server.url}${WS_TICKET_PATH}`, { method: "POST" });
    expect(anonymous.status).toBe(401);
    const get = await fetch(`${h.server.url}${WS_TICKET_PATH}`, { headers: { authorization: `Bearer ${h.ownerToken}` } });
    expect(get.status).toBe(405);
    const issued = await fetch(`${h.server.url}${WS_TICKET_PATH}`, { method: "POST", headers: { authorization: `Bearer ${h.ownerToken}` } });
    expect(issued.headers.get("cache-control")).toBe("no-store");
    const { ticket: one, expiresAt } = (await issued.json()) as { ticket: string; expiresAt: number };
    expect(expiresAt).toBeGreaterThan(Date.now());
    const first = await upgrade(`${wsUrl}?ticket=${one}`, { origin: h.server.url });
    expect(first.opened).toBe(true);
    if (first.opened) first.socket.close();
    expect((await refused(`${wsUrl}?ticket=${one}`, { origin: h.server.url })).status).toBe(401);
  });

  it("the typed client connects the way a browser must, with a fresh ticket per connection", async () => {
    let fetched = 0;
    const client = await LoomWsClient.connect({
      url: h.server.url,
      connect: ticketWebSocket(
        () => {
          fetched += 1;
          return ticket();
        },
        { origin: h.server.url },
      ),
    });
    const shell = await client.request("orchestration.getArchivedShellSnapshot", {});
    expect(shell.snapshotSequence).toBe(h.state.lastSequence);
    expect(fetched).toBe(1);
    await client.close();
  });
});

describe("WsTicketBook", () => {
  it("a ticket expires after its time to live, is spent by a failed redemption too, and the oldest go past the bound", () => {
    let now = 1_000;
    const book = new WsTicketBook({ ttlMs: 100, maxOutstanding: 2, clock: () => now });
    const a = book.issue();
    expect(a.expiresAt).toBe(1_100);
    now = 1_100;
    expect(book.redeem(a.ticket)).toBe(false);
    const b = book.issue();
    now = 1_199;
    expect(book.redeem(b.ticket)).toBe(true);
    expect(book.redeem(b.ticket)).toBe(false);
    const [c, d, e] = [book.issue(), book.issue(), book.issue()];
    expect(book.redeem(c.ticket)).toBe(false);
    expect(book.redeem(d.ticket)).toBe(true);
    expect(book.redeem(e.ticket)).toBe(true);
    expect(book.redeem("never-issued")).toBe(false);
  });
});

describe("heartbeats", () => {
  it("the server pings every interval and a peer that answers stays connected", async () => {
    const answer = await upgrade(wsUrl, { authorization: `Bearer ${h.ownerToken}` });
    if (!answer.opened) throw new Error("refused");
    let pings = 0;
    await new Promise<void>((resolve) => {
      answer.socket.on("ping", () => {
        pings += 1;
        if (pings === 4) resolve();
      });
    });
    expect(answer.socket.readyState).toBe(WebSocket.OPEN);
    answer.socket.close();
  });

  it("the server drops a peer that stops answering pings", async () => {
    // A hand-made upgrade over TCP that never answers a ping (a peer that has gone away without closing).
    const { host, hostname, port } = new URL(h.server.url);
    const socket: Socket = tcpConnect(Number(port), hostname);
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.write(
      `GET ${WS_PATH} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${h.ownerToken}\r\n\r\n`,
    );
    await closed;
    expect(received.startsWith("HTTP/1.1 101")).toBe(true);
    // At least one ping frame (opcode 0x9) arrived before the server gave up.
    expect(received.includes("\x89\x00")).toBe(true);
  });

  it("the client treats a server that stops answering its pings as gone and reconnects", async () => {
    // A stalled server is played by a bare `ws` server that accepts and then never answers: Loom's server cannot be made to stall on purpose.
    const stalled = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((resolve) => stalled.once("listening", () => resolve()));
    let connections = 0;
    stalled.on("connection", () => (connections += 1));
    const states: string[] = [];
    let reconnected!: () => void;
    const twice = new Promise<void>((resolve) => (reconnected = resolve));
    const client = await LoomWsClient.connect({
      url: `http://127.0.0.1:${(stalled.address() as { port: number }).port}`,
      connect: bearerWebSocket("unused"),
      heartbeatMs: 50,
      reconnectDelayMs: { min: 10, max: 10 },
      onConnectionChange: (state) => {
        states.push(state);
        if (states.filter((s) => s === "open").length === 2) reconnected();
      },
    });
    await twice;
    expect(states.slice(0, 3)).toEqual(["open", "reconnecting", "open"]);
    expect(connections).toBeGreaterThanOrEqual(2);
    await client.close();
    await new Promise<void>((resolve) => stalled.close(() => resolve()));
  });
});

describe("frames that are not protocol messages", () => {
  it("each gets a typed invalid_request error and the connection stays usable", async () => {
    const peer = await RawPeer.open();
    peer.send("this is not json");
    const notJson = await peer.next((m) => m.type === "error" && m.id === null, "the error for text that is not JSON");
    expect(notJson.error).toMatchObject({ code: "invalid_request", retryable: false });
    peer.send(Buffer.from([1, 2, 3]));
    peer.send(JSON.stringify({ type: "request", id: "no-method" }));
    peer.send(JSON.stringify({ type: "shout", id: "odd-type" }));
    peer.send(JSON.stringify({ type: "request", id: "m1", method: "orchestration.nope" }));
    peer.send(JSON.stringify({ type: "request", id: "p1", method: "orchestration.getThreadProjection", params: { threadId: 7 } }));
    peer.send(JSON.stringify({ type: "request", id: "o1", method: "orchestration.getArchivedShellSnapshot", options: { squeeze: true } }));
    peer.send(JSON.stringify({ type: "unsubscribe", id: "never-opened" }));
    const errors = await peer.errors(8);
    expect(errors.map((m) => (m.error as { code: string }).code)).toEqual(Array(8).fill("invalid_request"));
    expect(errors.map((m) => m.id)).toEqual([null, null, "no-method", "odd-type", "m1", "p1", "o1", "never-opened"]);
    expect((errors[1]!.error as { message: string }).message).toContain("binary frames are not accepted");
    expect((errors[5]!.error as { message: string }).message).toContain("threadId");
    // A request id in use by an open subscription is refused; the subscription goes on.
    peer.send(JSON.stringify({ type: "request", id: "s1", method: "orchestration.subscribeShell", params: {} }));
    await peer.next((m) => m.type === "stream" && m.id === "s1", "the shell snapshot");
    peer.send(JSON.stringify({ type: "request", id: "s1", method: "orchestration.getArchivedShellSnapshot" }));
    const busy = await peer.next((m) => m.type === "error" && m.id === "s1", "the busy-id error");
    expect((busy.error as { message: string }).message).toContain("already in use");
    peer.send(JSON.stringify({ type: "ping", id: "hb" }));
    expect(await peer.next((m) => m.type === "pong", "the pong")).toEqual({ type: "pong", id: "hb" });
    peer.send(JSON.stringify({ type: "unsubscribe", id: "s1" }));
    await peer.next((m) => m.type === "complete" && m.id === "s1", "the unsubscribe confirmation");
    peer.socket.close();
  });

  it("a message over the size limit closes the connection with 1009", async () => {
    const peer = await RawPeer.open();
    peer.send(JSON.stringify({ type: "ping", id: "x".repeat(1024 * 1024 + 10) }));
    expect(await peer.closed()).toBe(1009);
  });
});
