import { LoomWsClient, type WebSocketLike } from "../../src/client/loomWsClient.js";
import { WireError } from "../../src/client/wireErrors.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";

/**
 * The UI's way to the server: the session cookie (HttpOnly, set by the login
 * link) authenticates every HTTP call; writes add the CSRF header; the
 * WebSocket opens with a single-use ticket fetched with the cookie.
 */

const CSRF_HEADERS = { "x-loom-csrf": "1" } as const;

export class SignedOutError extends Error {
  override readonly name = "SignedOutError";
}

export async function isSignedIn(): Promise<boolean> {
  const res = await fetch("/api/ui/session", { credentials: "same-origin", cache: "no-store" });
  return res.status === 200 && ((await res.json()) as { signedIn?: unknown }).signedIn === true;
}

export async function signOut(): Promise<void> {
  await fetch("/api/ui/session", { method: "DELETE", credentials: "same-origin", headers: CSRF_HEADERS });
}

export async function fetchCapabilities(): Promise<CapabilitiesOutput> {
  const res = await fetch("/api/ui/capabilities", { credentials: "same-origin", cache: "no-store" });
  if (res.status === 401) throw new SignedOutError("signed out");
  if (!res.ok) throw new Error(`capabilities: HTTP ${res.status}`);
  return (await res.json()) as CapabilitiesOutput;
}

async function wsTicket(): Promise<string> {
  const res = await fetch("/api/ws-ticket", { method: "POST", credentials: "same-origin", headers: CSRF_HEADERS });
  if (res.status === 401) throw new SignedOutError("signed out");
  if (!res.ok) throw new Error(`ws-ticket: HTTP ${res.status}`);
  return ((await res.json()) as { ticket: string }).ticket;
}

export type ConnectionState = "connecting" | "open" | "reconnecting" | "closed" | "signed-out";

/** Connect the wire client; it reconnects (a fresh ticket each time) and resumes subscriptions by itself. */
export function connectWire(onState: (state: ConnectionState) => void): Promise<LoomWsClient> {
  return LoomWsClient.connect({
    url: location.origin,
    reconnectDelayMs: { min: 200, max: 2_000 },
    heartbeatMs: 10_000,
    onConnectionChange: onState,
    connect: async (url) => {
      try {
        return new WebSocket(`${url}?ticket=${encodeURIComponent(await wsTicket())}`) as unknown as WebSocketLike;
      } catch (error) {
        if (error instanceof SignedOutError) onState("signed-out");
        throw error;
      }
    },
  });
}

let commandCounter = 0;
/** A command id unique to this page load. */
export function commandId(kind: string): string {
  commandCounter += 1;
  return `cmd:ui:${kind}:${crypto.randomUUID()}:${commandCounter}`;
}

/** Dispatch a command over the wire; a rejection or failure becomes an Error with its message. */
export async function dispatch(client: LoomWsClient, type: string, data: Record<string, unknown>): Promise<void> {
  const receipt = await client.request("orchestration.dispatchCommand", { command: { type, commandId: commandId(type), data } });
  if (receipt.status !== "accepted") {
    const rejection = (receipt as { rejection?: { code?: string; message?: string } }).rejection;
    throw new Error(`${rejection?.code ?? "rejected"}: ${rejection?.message ?? type}`);
  }
}

export function errorText(error: unknown): string {
  if (error instanceof WireError) return `${error.failure.code}: ${error.failure.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** A failed HTTP API call: the failure's code, message and details as the server answered them. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
    readonly details: Readonly<Record<string, unknown>>,
  ) {
    super(`${code}: ${reason}`);
    this.name = "ApiError";
  }
}

/** A JSON call to the owner's HTTP API with the session cookie (writes add the CSRF header); an ApiError on error. */
export async function callApi<T>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    cache: "no-store",
    headers: { ...(method === "GET" ? {} : CSRF_HEADERS), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 401) throw new SignedOutError("signed out");
  const answer = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null;
  if (!res.ok) throw new ApiError(answer?.error?.code ?? `HTTP ${res.status}`, answer?.error?.message ?? path, answer?.error?.details ?? {});
  return answer as T;
}
