import { type Server, createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Event } from "@opencode-ai/sdk/v2";
import { basicAuthHeader, MCP_TOKEN_ENV, SERVER_PASSWORD_ENV } from "../opencodeConfig.js";
import type { LaunchOpencodeServer, OpencodeServerHandle, ServerExit } from "../serverProcess.js";

/**
 * A stand-in for `opencode serve` in unit tests: an HTTP server on
 * 127.0.0.1 that speaks the part of OpenCode's server API the driver uses
 * (GET /event as SSE, POST /session, /session/{id}/prompt_async,
 * /session/{id}/abort, /permission/{id}/reply, /question/{id}/reply and
 * /reject), behind the same basic auth, with event shapes taken from the
 * real server (opencode.e2e.test.ts runs the real one). The driver's
 * transport is the one fake DESIGN §6 allows. The prompt text decides what
 * the fake does:
 *
 *   "hang"   the turn runs until steered, aborted or stopped
 *   "ask"    a bash permission request; the reply ends the turn with "decision: <reply>"
 *   "quiz"   a question; the answer ends the turn with "answers: <json>"
 *   "crash"  the server exits (stderr quotes the MCP token)
 *   else     one assistant text "echo: <text>", usage, then idle
 *
 * A prompt while busy (a steer) is answered with "steered: <text>" before
 * the session goes idle.
 */

export interface FakeOpencode {
  readonly launch: LaunchOpencodeServer;
  /** Every request the fake received: method, path and JSON body. */
  readonly requests: { method: string; path: string; body: unknown }[];
  /** The environment and args of the last launch. */
  lastLaunch(): { env: NodeJS.ProcessEnv; args: readonly string[] } | null;
  /** Pushes a late event for the session (as after a stop). */
  push(event: Omit<Event, "id">): void;
  close(): Promise<void>;
}

const SESSION = "ses_fake";

export function fakeOpencode(): FakeOpencode {
  const requests: { method: string; path: string; body: unknown }[] = [];
  const streams = new Set<ServerResponse>();
  let launched: { env: NodeJS.ProcessEnv; args: readonly string[] } | null = null;
  let events = 0;
  let ids = 0;
  let busy = false;
  let currentUser: string | null = null;
  const waiting = new Map<string, "permission" | "question">();
  let password = "";
  let resolveExit: (exit: ServerExit) => void = () => undefined;
  const servers: Server[] = [];

  const emit = (event: Omit<Event, "id">): void => {
    const data = JSON.stringify({ id: `evt_${++events}`, ...event });
    for (const stream of streams) stream.write(`data: ${data}\n\n`);
  };
  const nextId = (prefix: string): string => `${prefix}_${String(++ids).padStart(4, "0")}`;
  const userMessage = (text: string): string => {
    const id = nextId("msg");
    emit({ type: "message.updated", properties: { sessionID: SESSION, info: { id, sessionID: SESSION, role: "user", time: { created: 1 }, agent: "build", model: { providerID: "loom", modelID: "m" } } } });
    emit({ type: "message.part.updated", properties: { sessionID: SESSION, time: 1, part: { id: nextId("prt"), sessionID: SESSION, messageID: id, type: "text", text } } });
    return id;
  };
  const answer = (parentID: string, text: string): void => {
    const id = nextId("msg");
    const info = { id, sessionID: SESSION, role: "assistant", parentID, modelID: "m", providerID: "loom", mode: "build", agent: "build", path: { cwd: "/w", root: "/" }, cost: 0, tokens: { input: 10, output: 2, reasoning: 0, cache: { read: 4, write: 0 } }, time: { created: 1 } };
    emit({ type: "message.updated", properties: { sessionID: SESSION, info } });
    const part = nextId("prt");
    emit({ type: "message.part.delta", properties: { sessionID: SESSION, messageID: id, partID: part, field: "text", delta: text } });
    emit({ type: "message.part.updated", properties: { sessionID: SESSION, time: 2, part: { id: part, sessionID: SESSION, messageID: id, type: "text", text, time: { start: 1, end: 2 } } } });
    emit({ type: "message.part.updated", properties: { sessionID: SESSION, time: 3, part: { id: nextId("prt"), sessionID: SESSION, messageID: id, type: "step-finish", reason: "stop", cost: 0, tokens: { input: 10, output: 2, reasoning: 0, cache: { read: 4, write: 0 } } } } });
    emit({ type: "message.updated", properties: { sessionID: SESSION, info: { ...info, time: { created: 1, completed: 3 }, finish: "stop" } } });
  };
  const idle = (): void => {
    busy = false;
    currentUser = null;
    emit({ type: "session.status", properties: { sessionID: SESSION, status: { type: "idle" } } });
    emit({ type: "session.idle", properties: { sessionID: SESSION } });
  };

  async function handle(req: IncomingMessage, res: ServerResponse, exit: () => void): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body: unknown = text === "" ? undefined : JSON.parse(text);
    requests.push({ method: req.method ?? "", path, body });
    if (req.headers.authorization !== basicAuthHeader(password)) {
      res.writeHead(401).end();
      return;
    }
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    };
    if (req.method === "GET" && path === "/event") {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      streams.add(res);
      res.on("close", () => streams.delete(res));
      res.write(`data: ${JSON.stringify({ id: "evt_0", type: "server.connected", properties: {} })}\n\n`);
      return;
    }
    if (req.method === "POST" && path === "/session") return json(200, { id: SESSION, slug: "fake", projectID: "p", directory: "/w", title: "Loom", version: "1.18.33", time: { created: 1, updated: 1 } });
    if (req.method === "POST" && path === `/session/${SESSION}/prompt_async`) {
      const prompt = ((body as { parts: { text: string }[] }).parts[0]?.text ?? "").trim();
      res.writeHead(204).end();
      if (busy && currentUser !== null) {
        // As OpenCode does: the running step's answer finishes, then the loop answers the new message.
        answer(currentUser, "");
        const steered = userMessage(prompt);
        answer(steered, `steered: ${prompt}`);
        return idle();
      }
      busy = true;
      currentUser = userMessage(prompt);
      emit({ type: "session.status", properties: { sessionID: SESSION, status: { type: "busy" } } });
      if (prompt === "crash") {
        return exit();
      }
      if (prompt === "hang") return;
      if (prompt === "ask") {
        const id = nextId("per");
        waiting.set(id, "permission");
        emit({ type: "permission.asked", properties: { id, sessionID: SESSION, permission: "bash", patterns: ["rm -rf build"], metadata: { command: "rm -rf build" }, always: ["rm *"] } });
        return;
      }
      if (prompt === "quiz") {
        const id = nextId("que");
        waiting.set(id, "question");
        emit({ type: "question.asked", properties: { id, sessionID: SESSION, questions: [{ question: "Proceed?", header: "Go", options: [{ label: "yes", description: "go on" }] }] } });
        return;
      }
      answer(currentUser, `echo: ${prompt}`);
      return idle();
    }
    if (req.method === "POST" && path === `/session/${SESSION}/abort`) {
      json(200, true);
      if (busy) {
        emit({ type: "session.error", properties: { sessionID: SESSION, error: { name: "MessageAbortedError", data: { message: "aborted" } } } });
        idle();
      }
      return;
    }
    const reply = /^\/(permission|question)\/([^/]+)\/(reply|reject)$/.exec(path);
    if (req.method === "POST" && reply !== null) {
      const id = reply[2] ?? "";
      if (!waiting.has(id)) return json(404, { name: "NotFoundError", data: { message: `no request ${id}` } });
      waiting.delete(id);
      json(200, true);
      const user = currentUser;
      if (user === null) return;
      if (reply[1] === "permission") {
        emit({ type: "permission.replied", properties: { sessionID: SESSION, requestID: id, reply: (body as { reply: "once" }).reply } });
        answer(user, `decision: ${(body as { reply: string }).reply}`);
      } else {
        answer(user, reply[3] === "reject" ? "answers: rejected" : `answers: ${JSON.stringify((body as { answers: unknown }).answers)}`);
      }
      return idle();
    }
    json(404, { name: "NotFoundError", data: { message: `no route ${req.method ?? ""} ${path}` } });
  }

  const launch: LaunchOpencodeServer = (spec) =>
    new Promise<OpencodeServerHandle>((resolve, reject) => {
      launched = { env: spec.env, args: spec.args };
      password = spec.env[SERVER_PASSWORD_ENV] ?? "";
      let stderr = "";
      const exited = new Promise<ServerExit>((done) => (resolveExit = done));
      const server = createServer((req, res) => {
        void handle(req, res, () => {
          stderr += `fatal: lost ${spec.env[MCP_TOKEN_ENV] ?? ""}\n`;
          for (const stream of streams) stream.destroy();
          server.closeAllConnections();
          server.close(() => resolveExit({ code: 3, signal: null, spawnError: null }));
        }).catch((error: Error) => res.writeHead(500).end(error.message));
      });
      servers.push(server);
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        resolve({
          url: `http://127.0.0.1:${port}`,
          exited,
          stderrTail: (max) => {
            let out = stderr.slice(-max).trim();
            for (const secret of spec.secrets) out = out.replaceAll(secret, "[redacted]");
            return out;
          },
          close: () =>
            new Promise<void>((done) => {
              for (const stream of streams) stream.destroy();
              server.closeAllConnections();
              server.close(() => {
                resolveExit({ code: 0, signal: null, spawnError: null });
                done();
              });
            }),
        });
      });
    });

  return {
    launch,
    requests,
    lastLaunch: () => launched,
    push: (event) => emit(event),
    close: async () => {
      await Promise.all(servers.map((server) => new Promise<void>((done) => (server.listening ? server.close(() => done()) : done()))));
    },
  };
}
