import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { GUEST_ATTACHMENT_MAX_BYTES, GUEST_MESSAGE_MAX_LENGTH, GUEST_SHARE_TTL_MS } from "../contracts/entities/guestShares.js";
import { ManualClock } from "../testkit/manualClock.js";
import { GUEST_REFUSED_BODY } from "./guestRoutes.js";

/**
 * Live guest share over real HTTP and WebSocket to the real server with the
 * scripted agent: the owner's link, one browser's redemption, the redacted
 * view, guest messages at their limits, the owner sending one to the agent,
 * closing while the guest watches, and every way a guest cookie or a bad link
 * is refused with the one answer.
 */

let h: LoomHarness;
let url: string;
let origin: string;

beforeAll(async () => {
  h = await LoomHarness.start();
  url = h.server.url;
  origin = new URL(url).origin;
});

afterAll(async () => {
  await h.close();
});

const owner = () => ({ authorization: `Bearer ${h.ownerToken}` });
const write = (cookie?: string) => ({ "content-type": "application/json", origin, "x-loom-csrf": "1", ...(cookie === undefined ? {} : { cookie }) });

async function share(threadId: string): Promise<{ url: string; token: string; path: string }> {
  const res = await fetch(`${url}/api/threads/${encodeURIComponent(threadId)}/guest-share`, { method: "POST", headers: owner() });
  expect(res.status).toBe(200);
  const link = (await res.json()) as { url: string };
  const token = link.url.slice(`${url}/g/`.length);
  return { url: link.url, token, path: `/g/${token}` };
}

async function redeem(path: string, guestName: string, cookie?: string): Promise<Response> {
  return fetch(`${url}${path}/redeem`, { method: "POST", headers: write(cookie), body: JSON.stringify({ guestName }) });
}

async function guestCookieOf(path: string, name: string): Promise<string> {
  const res = await redeem(path, name);
  expect(res.status).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

async function refusedBody(res: Response): Promise<string> {
  expect(res.status).toBe(404);
  return res.text();
}

/** A guest socket's updates, and a wait for the first one `probe` accepts. */
function openGuestSocket(path: string, cookie: string) {
  const socket = new WebSocket(`${url.replace("http", "ws")}${path}/ws`, { headers: { cookie, origin } });
  const updates: { kind: string; view?: { rows: { kind: string; text: string }[]; working: boolean; messages: { status: string }[] } }[] = [];
  const listeners = new Set<() => void>();
  socket.on("message", (data) => {
    updates.push(JSON.parse((data as Buffer).toString("utf8")));
    for (const check of [...listeners]) check();
  });
  const closed = new Promise<{ code: number }>((resolve) => socket.on("close", (code) => resolve({ code })));
  /** Resolves on the message that makes `probe` true (or at once); one deadline for the whole wait. */
  function until(probe: (update: (typeof updates)[number]) => boolean, what: string): Promise<void> {
    if (updates.some(probe)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(deadline);
        listeners.delete(check);
      };
      const check = () => {
        if (!updates.some(probe)) return;
        done();
        resolve();
      };
      const deadline = setTimeout(() => {
        done();
        reject(new Error(`guest socket: timed out waiting for ${what}; got ${JSON.stringify(updates.map((u) => u.kind))}`));
      }, 10_000);
      listeners.add(check);
    });
  }
  return { socket, updates, until, closed };
}

describe("guest share links", () => {
  it("signs links with a key kept in the state dir (0600), never in the event log", async () => {
    const thread = await h.createThread({ title: "shared work" });
    const link = await share(thread.threadId);
    expect(link.url).toMatch(new RegExp(`^${url}/g/[\\w-]{22}\\.[\\w-]{22}$`));
    const again = await share(thread.threadId);
    expect(again.url).toBe(link.url);
    const keyFile = join(h.server.stateDir.root, "guest-share.key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const mac = link.token.split(".")[1]!;
    const key = readFileSync(keyFile, "utf8").trim();
    const log = readFileSync(h.server.stateDir.databasePath);
    expect(log.includes(mac)).toBe(false);
    expect(log.includes(key)).toBe(false);
    const read = await fetch(`${url}/api/threads/${encodeURIComponent(thread.threadId)}/guest-share`, { headers: owner() });
    expect(((await read.json()) as { link: { url: string } }).link.url).toBe(link.url);
  });

  it("refuses forged, closed and replayed links and a second browser with one indistinguishable answer", async () => {
    const thread = await h.createThread({ title: "one browser" });
    const link = await share(thread.threadId);
    const [shareId, mac] = link.token.split(".") as [string, string];
    const forgedMac = `${mac.slice(0, -2)}${mac.endsWith("AA") ? "BB" : "AA"}`;
    const answers = [
      await refusedBody(await redeem(`/g/${shareId}.${forgedMac}`, "Mallory")),
      await refusedBody(await redeem(`/g/${shareId.slice(1)}x.${mac}`, "Mallory")),
      await refusedBody(await fetch(`${url}${link.path}/view`)),
    ];
    const cookie = await guestCookieOf(link.path, "Ada");
    expect(cookie).toMatch(/^loom_guest=[\w-]{43}$/);
    answers.push(await refusedBody(await redeem(link.path, "Eve")));
    answers.push(await refusedBody(await fetch(`${url}${link.path}/view`, { headers: { cookie: "loom_guest=someone-else" } })));
    // The bound browser redeeming again (a reload) keeps its place.
    expect((await redeem(link.path, "Ada", cookie)).status).toBe(200);
    expect((await fetch(`${url}${link.path}/view`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${url}/api/threads/${encodeURIComponent(thread.threadId)}/guest-share`, { method: "DELETE", headers: owner() })).status).toBe(200);
    answers.push(await refusedBody(await fetch(`${url}${link.path}/view`, { headers: { cookie } })));
    answers.push(await refusedBody(await redeem(link.path, "Ada", cookie)));
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).not.toMatch(/thread:|guest-share/);
  });

  it("sets an HttpOnly SameSite=Strict cookie scoped to the share's path, and needs the page's origin and CSRF header to write", async () => {
    const thread = await h.createThread({ title: "cookie" });
    const link = await share(thread.threadId);
    const page = await fetch(`${url}${link.path}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script src="/g/page.js">');
    expect((await fetch(`${url}${link.path}/redeem`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ guestName: "Ada" }) })).status).toBe(403);
    expect((await fetch(`${url}${link.path}/redeem`, { method: "POST", headers: { "content-type": "application/json", origin: "http://evil.example", "x-loom-csrf": "1" }, body: JSON.stringify({ guestName: "Ada" }) })).status).toBe(403);
    const name41 = await redeem(link.path, "x".repeat(41));
    expect(name41.status).toBe(400);
    expect(((await name41.json()) as { error: { message: string } }).error.message).toContain("1 to 40");
    const res = await redeem(link.path, "x".repeat(40));
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toBe(`${res.headers.get("set-cookie")!.split(";")[0]}; Path=${link.path}; HttpOnly; SameSite=Strict; Max-Age=86400`);
  });

  it("grants nothing outside its share: no owner API, no MCP, no owner WebSocket, no other share", async () => {
    const mine = await share((await h.createThread({ title: "mine" })).threadId);
    const other = await share((await h.createThread({ title: "other" })).threadId);
    const cookie = await guestCookieOf(mine.path, "Ada");
    expect((await fetch(`${url}/api/orchestration/shell-snapshot`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${url}/api/guest-messages`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${url}/mcp`, { method: "POST", headers: { cookie, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) })).status).toBe(401);
    expect((await fetch(`${url}${other.path}/view`, { headers: { cookie } })).status).toBe(404);
    expect((await fetch(`${url}${other.path}/messages`, { method: "POST", headers: write(cookie), body: JSON.stringify({ text: "hi" }) })).status).toBe(404);
    const ownerSocket = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${url.replace("http", "ws")}/api/ws`, { headers: { cookie, origin } });
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => resolve(101));
    });
    expect(ownerSocket).toBe(401);
    const otherSocket = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${url.replace("http", "ws")}${other.path}/ws`, { headers: { cookie, origin } });
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => resolve(101));
    });
    expect(otherSocket).toBe(404);
  });
});

describe("guest message attachments", () => {
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
  const upload = (name: string, type: string, data: Buffer) => ({ name, type, data: data.toString("base64") });

  it("stores up to 4 attachments of up to 10 MiB outside the log, refuses more, larger or mistyped ones with nothing written, and serves them to the owner only", async () => {
    const created = await h.createThread({ title: "attachments" });
    const link = await share(created.threadId);
    const cookie = await guestCookieOf(link.path, "Ada");
    const shareId = link.token.split(".")[0]!;
    const dir = join(h.server.stateDir.root, "guest-attachments", shareId);
    const post = (text: string, attachments: unknown[]) => fetch(`${url}${link.path}/messages`, { method: "POST", headers: write(cookie), body: JSON.stringify({ text, attachments }) });
    const files = () => (existsSync(dir) ? readdirSync(dir).sort() : []);
    const threadUrl = `${url}/api/threads/${encodeURIComponent(created.threadId)}`;
    const messages = async () => ((await (await fetch(`${threadUrl}/guest-share`, { headers: owner() })).json()) as { messages: { id: string; attachments?: { id: string; name: string; size: number; sha256: string }[] }[] }).messages;

    const big = Buffer.alloc(GUEST_ATTACHMENT_MAX_BYTES, "a");
    const notes = Buffer.from("NOTES_MARKER_7 and the rest", "utf8");
    const refusals = [
      await post("five", ["1", "2", "3", "4", "5"].map((n) => upload(`${n}.png`, "image/png", PNG))),
      await post("too large", [upload("big.txt", "text/plain", Buffer.alloc(GUEST_ATTACHMENT_MAX_BYTES + 1, "a"))]),
      await post("wrong type", [upload("x.svg", "image/svg+xml", Buffer.from("<svg/>"))]),
      await post("not what it says", [upload("fake.png", "image/png", Buffer.from("plain text"))]),
    ];
    const errors = [];
    for (const res of refusals) {
      expect(res.status).toBe(400);
      errors.push(((await res.json()) as { error: { message: string } }).error.message);
    }
    expect(errors[0]).toContain("at most 4 attachments");
    expect(errors[1]).toContain("at most 10485760 (10 MiB)");
    expect(errors[2]).toContain("image/svg+xml; accepted:");
    expect(errors[3]).toContain("does not match the type");
    expect(errors.every((message) => message.startsWith("invalid_guest_attachment:"))).toBe(true);
    expect(files()).toEqual([]);
    expect(await messages()).toEqual([]);

    const four = [upload("big.txt", "text/plain", big), upload("notes.txt", "text/plain", notes), upload("shot.png", "image/png", PNG), upload("spec.pdf", "application/pdf", Buffer.from("%PDF-1.4 x"))];
    const accepted = await post("see these", four);
    expect(accepted.status).toBe(200);
    const { guestMessageId } = (await accepted.json()) as { guestMessageId: string };
    const [message] = await messages();
    expect(message!.id).toBe(guestMessageId);
    const described = message!.attachments!;
    expect(described.map((a) => [a.name, a.size])).toEqual([["big.txt", GUEST_ATTACHMENT_MAX_BYTES], ["notes.txt", notes.length], ["shot.png", PNG.length], ["spec.pdf", 10]]);
    expect(described[1]!.sha256).toBe(createHash("sha256").update(notes).digest("hex"));
    expect(files()).toEqual(described.map((a) => a.id).sort());
    expect(readFileSync(h.server.stateDir.databasePath).includes("NOTES_MARKER_7")).toBe(false);

    // The owner downloads one; a guest cookie, a wrong bearer and the guest's own path get nothing.
    const fileUrl = `${threadUrl}/guest-messages/${encodeURIComponent(guestMessageId)}/attachments/${described[1]!.id}`;
    const download = await fetch(fileUrl, { headers: owner() });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''notes.txt");
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await download.arrayBuffer()).equals(notes)).toBe(true);
    expect((await fetch(fileUrl, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(fileUrl, { headers: { authorization: "Bearer not-the-owner" } })).status).toBe(401);
    expect(await refusedBody(await fetch(`${url}${link.path}/attachments/${described[1]!.id}`, { headers: { cookie } }))).toBe(GUEST_REFUSED_BODY);

    // Sent: the agent gets each name and the file to read it from.
    const sent = await fetch(`${threadUrl}/guest-messages/${encodeURIComponent(guestMessageId)}/send`, { method: "POST", headers: owner() });
    expect(sent.status).toBe(200);
    const { runId } = (await sent.json()) as { runId: string };
    await h.waitForEnd(runId);
    const lines = described.map((a) => `- ${a.name}: ${join(dir, a.id)}`).join("\n");
    expect(h.assistantTexts(created.threadId, runId)).toEqual([`Echo: Message from guest Ada, sent by the owner:\n\nsee these\n\nAttachments:\n${lines}`]);

    // Dismissed: its file is removed and no longer served.
    const second = await post("one more", [upload("late.png", "image/png", PNG)]);
    const late = (await second.json()) as { guestMessageId: string };
    const lateId = (await messages()).find((m) => m.id === late.guestMessageId)!.attachments![0]!.id;
    expect(files()).toContain(lateId);
    expect((await fetch(`${threadUrl}/guest-messages/${encodeURIComponent(late.guestMessageId)}/dismiss`, { method: "POST", headers: owner() })).status).toBe(200);
    expect(files()).not.toContain(lateId);
    expect((await fetch(`${threadUrl}/guest-messages/${encodeURIComponent(late.guestMessageId)}/attachments/${lateId}`, { headers: owner() })).status).toBe(400);

    // A message the decider refuses (a fourth waiting one) leaves none of its files behind.
    for (const text of ["one", "two", "three"]) expect((await post(text, [])).status).toBe(200);
    const before = files();
    const fourth = await post("four", [upload("four.png", "image/png", PNG)]);
    expect(fourth.status).toBe(400);
    expect(((await fourth.json()) as { error: { message: string } }).error.message).toContain("at most 3");
    expect(files()).toEqual(before);
  });
});

describe("a guest message body", () => {
  it("is bounded before it is read: a declared length over five full attachments is answered 413", async () => {
    const link = await share((await h.createThread({ title: "bounded" })).threadId);
    const cookie = await guestCookieOf(link.path, "Ada");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${url}${link.path}/messages`, { method: "POST", headers: { ...write(cookie), "content-length": String(200 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write("{");
    });
    expect(status).toBe(413);
  });
});

describe("watching and suggesting", () => {
  it("shows a redacted live view, holds guest messages to their limits, and the agent gets the one the owner sends", async () => {
    const created = await h.createThread({
      title: "live run",
      prompt: script({ say: "Step one" }, { run: "printf '%s%s\\n' SECRET_ VALUE_42" }, { sleep: 150 }, { say: "Step two" }),
    });
    const link = await share(created.threadId);
    const cookie = await guestCookieOf(link.path, "Ada");
    const guest = openGuestSocket(link.path, cookie);
    await guest.until((u) => u.kind === "view" && u.view!.rows.some((row) => row.text === "Step two") && !u.view!.working, "the run's end in the view");
    const view = guest.updates.at(-1)!.view!;
    expect(view.rows.map((row) => row.kind)).toContain("user");
    expect(JSON.stringify(guest.updates)).not.toContain("SECRET_VALUE_42");
    expect(view.rows.some((row) => row.kind === "activity" && row.text.startsWith("Ran a command"))).toBe(true);

    const post = (text: string) => fetch(`${url}${link.path}/messages`, { method: "POST", headers: write(cookie), body: JSON.stringify({ text }) });
    expect((await post("x".repeat(GUEST_MESSAGE_MAX_LENGTH + 1))).status).toBe(400);
    const ids: string[] = [];
    for (const text of ["Try the other branch", "x".repeat(GUEST_MESSAGE_MAX_LENGTH), "third"]) {
      const res = await post(text);
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { guestMessageId: string }).guestMessageId);
    }
    const fourth = await post("fourth");
    expect(fourth.status).toBe(400);
    expect(((await fourth.json()) as { error: { message: string } }).error.message).toContain("at most 3");

    const inbox = (await (await fetch(`${url}/api/guest-messages`, { headers: owner() })).json()) as { messages: { id: string; guestName: string }[] };
    expect(inbox.messages.filter((m) => ids.includes(m.id)).map((m) => m.guestName)).toEqual(["Ada", "Ada", "Ada"]);
    const base = `${url}/api/threads/${encodeURIComponent(created.threadId)}/guest-messages`;
    expect((await fetch(`${base}/${encodeURIComponent(ids[2]!)}/dismiss`, { method: "POST", headers: owner() })).status).toBe(200);
    expect((await fetch(`${base}/${encodeURIComponent(ids[2]!)}/dismiss`, { method: "POST", headers: owner() })).status).toBe(400);
    const sent = await fetch(`${base}/${encodeURIComponent(ids[0]!)}/send`, { method: "POST", headers: owner() });
    expect(sent.status).toBe(200);
    const { runId } = (await sent.json()) as { runId: string };
    expect(h.run(runId).guestMessageId).toBe(ids[0]);
    await h.waitForEnd(runId);
    expect(h.assistantTexts(created.threadId, runId)).toEqual(["Echo: Message from guest Ada, sent by the owner:\n\nTry the other branch"]);
    await guest.until((u) => u.kind === "view" && u.view!.messages.map((m) => m.status).join() === "sent,pending,dismissed", "the guest's messages as the owner left them");

    // The owner closes the share while the guest watches: the stream ends and the socket closes.
    expect((await fetch(`${url}/api/threads/${encodeURIComponent(created.threadId)}/guest-share`, { method: "DELETE", headers: owner() })).status).toBe(200);
    await guest.until((u) => u.kind === "ended", "the end of the share");
    expect((await guest.closed).code).toBe(1000);
    expect((await post("after close")).status).toBe(404);
  });

  it("closes a guest socket that sends anything: the socket is its subscription and has no methods", async () => {
    const link = await share((await h.createThread({ title: "no methods" })).threadId);
    const cookie = await guestCookieOf(link.path, "Ada");
    const guest = openGuestSocket(link.path, cookie);
    await guest.until((u) => u.kind === "view", "the first view");
    guest.socket.send(JSON.stringify({ id: 1, method: "orchestration.dispatchCommand", params: {} }));
    expect((await guest.closed).code).toBe(1008);
  });

  it("rate-limits redemption per address", async () => {
    const link = await share((await h.createThread({ title: "limited" })).threadId);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) statuses.push((await redeem(`/g/${link.token.split(".")[0]}.${"A".repeat(22)}`, "Mallory")).status);
    // Ten refusals in the window at most (earlier tests' refusals from this address count too), then 429 for every attempt.
    const first = statuses.indexOf(429);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(10);
    expect(statuses.slice(0, first).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(first).every((s) => s === 429)).toBe(true);
    expect((await redeem(link.path, "Ada")).status).toBe(429);
  });
});

describe("an expired link", () => {
  it("is refused with the same answer once GUEST_SHARE_TTL_MS passed", async () => {
    const clock = new ManualClock(Date.now());
    const timed = await LoomHarness.start({ clock: clock.now });
    try {
      const base = timed.server.url;
      const headers = { "content-type": "application/json", origin: new URL(base).origin, "x-loom-csrf": "1" };
      const thread = await timed.createThread({ title: "expires" });
      const opened = await fetch(`${base}/api/threads/${encodeURIComponent(thread.threadId)}/guest-share`, { method: "POST", headers: { authorization: `Bearer ${timed.ownerToken}` } });
      const link = (await opened.json()) as { url: string; expiresAt: string };
      const path = new URL(link.url).pathname;
      const redeemed = await fetch(`${base}${path}/redeem`, { method: "POST", headers, body: JSON.stringify({ guestName: "Ada" }) });
      const cookie = redeemed.headers.get("set-cookie")!.split(";")[0]!;
      expect((await fetch(`${base}${path}/view`, { headers: { cookie } })).status).toBe(200);
      // The engine stamped the share when it opened it: 24 hours from then, to the millisecond.
      const expiresAt = Date.parse(link.expiresAt);
      expect(expiresAt - clock.now()).toBeGreaterThan(GUEST_SHARE_TTL_MS - 60_000);
      clock.advance(expiresAt - clock.now() - 1);
      expect((await fetch(`${base}${path}/view`, { headers: { cookie } })).status).toBe(200);
      clock.advance(1);
      const expired = await fetch(`${base}${path}/view`, { headers: { cookie } });
      expect(expired.status).toBe(404);
      expect(await expired.text()).toBe(GUEST_REFUSED_BODY);
      expect(await (await fetch(`${base}${path}/redeem`, { method: "POST", headers: { ...headers, cookie }, body: JSON.stringify({ guestName: "Ada" }) })).text()).toBe(GUEST_REFUSED_BODY);
      const owner = (await (await fetch(`${base}/api/threads/${encodeURIComponent(thread.threadId)}/guest-share`, { headers: { authorization: `Bearer ${timed.ownerToken}` } })).json()) as { link: unknown };
      expect(owner.link).toBeNull();
    } finally {
      await timed.close();
    }
  });
});
