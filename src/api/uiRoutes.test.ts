import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";
import { UiSessionBook } from "./uiSessions.js";

/**
 * Sign-in for the web UI over real HTTP to the real server: login links for
 * the owner only, single-use codes, the session cookie's attributes, cookie
 * auth on the API with the CSRF check on writes, and sign-out.
 */

let h: LoomHarness;
let url: string;

beforeAll(async () => {
  h = await LoomHarness.start();
  url = h.server.url;
});

afterAll(async () => {
  await h.close();
});

async function loginLink(): Promise<string> {
  const res = await fetch(`${url}/api/ui/login-link`, { method: "POST", headers: { authorization: `Bearer ${h.ownerToken}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { url: string }).url;
}

async function signIn(): Promise<string> {
  const res = await fetch(await loginLink(), { redirect: "manual" });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!;
  return cookie.split(";")[0]!;
}

describe("web UI sign-in", () => {
  it("issues login links to the owner only", async () => {
    expect((await fetch(`${url}/api/ui/login-link`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${url}/api/ui/login-link`, { method: "POST", headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await fetch(`${url}/api/ui/login-link`, { method: "GET", headers: { authorization: `Bearer ${h.ownerToken}` } })).status).toBe(405);
    expect(await loginLink()).toMatch(new RegExp(`^${url}/login\\?code=[\\w-]{43}$`));
  });

  it("redeems a code once for an HttpOnly SameSite=Strict cookie and sends the browser to /", async () => {
    const link = await loginLink();
    const res = await fetch(link, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("set-cookie")).toMatch(/^loom_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=2592000$/);
    const again = await fetch(link, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toContain("loom open");
    expect((await fetch(`${url}/login?code=made-up`, { redirect: "manual" })).status).toBe(401);
    expect((await fetch(`${url}/login`, { redirect: "manual" })).status).toBe(401);
  });

  it("keeps only hashes of sessions, in a 0600 file", async () => {
    const cookie = await signIn();
    const file = join(h.server.stateDir.root, "ui-sessions.json");
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(cookie.split("=")[1]);
    const { sessions } = JSON.parse(text) as { sessions: { hash: string }[] };
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((s) => /^[0-9a-f]{64}$/.test(s.hash))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("authenticates API reads with the cookie, and writes only with the same origin and the CSRF header", async () => {
    const cookie = await signIn();
    expect(await (await fetch(`${url}/api/ui/session`)).json()).toEqual({ signedIn: false });
    expect(await (await fetch(`${url}/api/ui/session`, { headers: { cookie } })).json()).toEqual({ signedIn: true });
    expect((await fetch(`${url}/api/orchestration/shell-snapshot`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${url}/api/orchestration/shell-snapshot`, { headers: { cookie: "loom_session=forged" } })).status).toBe(401);
    const command = JSON.stringify({ type: "thread.create", commandId: "cmd:ui-test:1", data: { threadId: "thread:ui-1", projectId: "default", title: "from the ui" } });
    const post = (headers: Record<string, string>) => fetch(`${url}/api/orchestration/dispatch`, { method: "POST", headers: { "content-type": "application/json", cookie, ...headers }, body: command });
    expect((await post({})).status).toBe(401);
    expect((await post({ origin: url })).status).toBe(401);
    expect((await post({ "x-loom-csrf": "1" })).status).toBe(401);
    expect((await post({ origin: "http://evil.example", "x-loom-csrf": "1" })).status).toBe(401);
    expect(h.state.threads.has("thread:ui-1")).toBe(false);
    expect((await post({ origin: url, "x-loom-csrf": "1" })).status).toBe(200);
    expect(h.state.threads.get("thread:ui-1")?.title).toBe("from the ui");
    const ticket = await fetch(`${url}/api/ws-ticket`, { method: "POST", headers: { cookie, origin: url, "x-loom-csrf": "1" } });
    expect(ticket.status).toBe(200);
  });

  it("answers the provider capabilities to a signed-in page", async () => {
    const cookie = await signIn();
    expect((await fetch(`${url}/api/ui/capabilities`)).status).toBe(401);
    const body = (await (await fetch(`${url}/api/ui/capabilities`, { headers: { cookie } })).json()) as { providers: { providerInstanceId: string; available: boolean; interrupt: boolean }[] };
    expect(body.providers.map((p) => p.providerInstanceId)).toEqual(["scripted", "plain"]);
    expect(body.providers.every((p) => p.available)).toBe(true);
    // Whether each provider can stop a running turn (the page's Interrupt and restart).
    expect(body.providers.map((p) => p.interrupt)).toEqual([true, true]);
    // The projects a new thread may start in, the default first.
    expect((body as unknown as { projects: { projectId: string; name: string }[] }).projects).toEqual([{ projectId: "default", name: expect.any(String) as string }]);
  });

  it("answers a thread's budget to a signed-in page: null for a thread that is no delegated task with a budget", async () => {
    const cookie = await signIn();
    const { threadId } = await h.createThread({ title: "No budget" });
    const path = `${url}/api/ui/threads/${encodeURIComponent(threadId)}/budget`;
    expect((await fetch(path)).status).toBe(401);
    expect(await (await fetch(path, { headers: { cookie } })).json()).toEqual({ budget: null, taskId: null });
    expect((await fetch(path, { method: "POST", headers: { cookie, origin: url, "x-loom-csrf": "1" } })).status).toBe(405);
  });

  it("answers a launch estimate to a signed-in page, and a typed error for a bad query or an unknown provider", async () => {
    const cookie = await signIn();
    const path = `${url}/api/ui/estimate?providerInstanceId=scripted`;
    expect((await fetch(path)).status).toBe(401);
    const estimate = (await (await fetch(path, { headers: { cookie } })).json()) as { dryRun: boolean; agentCalls: number; groups: { providerInstanceId: string; model: string | null; sampleSize: number }[] };
    expect(estimate).toMatchObject({ dryRun: true, agentCalls: 1 });
    // No model given: the provider's default, as delegate_task picks it.
    expect(estimate.groups).toMatchObject([{ providerInstanceId: "scripted", model: "scripted-1" }]);
    const unknown = await fetch(`${url}/api/ui/estimate?providerInstanceId=nowhere`, { headers: { cookie } });
    expect(unknown.status).toBe(409);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("provider_unavailable");
    const bad = await fetch(`${url}/api/ui/estimate?role=wizard`, { headers: { cookie } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("providerInstanceId") });
  });

  it("signs out: the session ends and the cookie is cleared", async () => {
    const cookie = await signIn();
    const out = await fetch(`${url}/api/ui/session`, { method: "DELETE", headers: { cookie, origin: url, "x-loom-csrf": "1" } });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await (await fetch(`${url}/api/ui/session`, { headers: { cookie } })).json()).toEqual({ signedIn: false });
  });
});

describe("UiSessionBook", () => {
  it("expires codes and sessions by its clock, and keeps sessions across instances", () => {
    let now = 1_000;
    const file = join(mkdtempSync(join(tmpdir(), "loom-ui-sessions-")), "ui-sessions.json");
    const book = new UiSessionBook({ file, clock: () => now, loginTtlMs: 100, sessionTtlMs: 1_000 });
    const late = book.issueLoginCode();
    now += 100;
    expect(book.redeemLoginCode(late.code)).toBeNull();
    const token = book.redeemLoginCode(book.issueLoginCode().code);
    expect(token).not.toBeNull();
    expect(new UiSessionBook({ file, clock: () => now }).isSession(token)).toBe(true);
    now += 1_000;
    expect(book.isSession(token)).toBe(false);
    expect(new UiSessionBook({ file, clock: () => now }).isSession(token)).toBe(false);
  });
});
