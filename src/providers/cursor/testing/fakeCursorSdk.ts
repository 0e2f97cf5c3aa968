import type { AgentOptions, Run, RunResult, RunStatus, SDKAgent, SDKMessage, SendOptions, SteerAckOutcome } from "@cursor/sdk";
import type { CursorSdk } from "../session.js";

/**
 * A fake of @cursor/sdk's public interface (`Agent.create`, `Agent.resume`,
 * `SDKAgent`, `Run`), built from the SDK's published types. Cursor's agent
 * calls Cursor's backend, so it cannot run offline: this SDK boundary is the
 * fake DESIGN §6 allows for it. Like the SDK's local store, it keeps every
 * agent it created (and what was sent to it), so `Agent.resume` of a known
 * id continues that agent; an unknown id is rejected. The message text
 * decides what a run does:
 *
 *   "hang"    runs until steered or cancelled; a steer is delivered and answered "steered: <text>"
 *   "ask"     calls the custom tool loom_ask_user, then answers "answer: <tool result>"
 *   "fail"    ends with status "error"
 *   "fail: <message>"  ends with status "error" and that message (a limit's words)
 *   "recall"  answers "recall: " and the agent's earlier messages, joined by " | "
 *   else      answers "echo: <text>", reports usage, finishes
 *
 * `steerOutcome` makes steer hand the text back ("revert_to_followup").
 */

export interface FakeCursor {
  readonly sdk: CursorSdk;
  /** What Agent.create and every send received (tokens included: tests check them). */
  readonly created: AgentOptions[];
  /** What Agent.resume received. */
  readonly resumed: { agentId: string; options: Partial<AgentOptions> | undefined }[];
  readonly sends: { text: string; options: SendOptions | undefined }[];
  readonly steers: string[];
  readonly cancels: number[];
  steerOutcome: SteerAckOutcome;
  /** Make Agent.create reject, as the SDK does for a bad key. */
  failCreate: Error | null;
}

class FakeRun implements Run {
  readonly agentId: string;
  private readonly queue: SDKMessage[] = [];
  private wake: (() => void) | null = null;
  private state: RunStatus = "running";
  private readonly listeners = new Set<(status: RunStatus) => void>();
  private settled: ((result: RunResult) => void) | null = null;
  private readonly outcome: Promise<RunResult>;

  constructor(
    readonly id: string,
    agentId: string,
    private readonly fake: FakeCursor,
  ) {
    this.agentId = agentId;
    this.outcome = new Promise((resolve) => (this.settled = resolve));
  }

  get status(): RunStatus {
    return this.state;
  }

  push(message: SDKMessage): void {
    this.queue.push(message);
    this.wake?.();
  }

  finish(status: "finished" | "error" | "cancelled", error?: string): void {
    if (this.state !== "running") return;
    this.state = status;
    for (const listener of this.listeners) listener(status);
    this.settled?.({ id: this.id, status, ...(error === undefined ? {} : { error: { message: error } }) });
    this.wake?.();
  }

  supports(): boolean {
    return true;
  }

  unsupportedReason(): string | undefined {
    return undefined;
  }

  async *stream(): AsyncGenerator<SDKMessage, void> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.state !== "running") return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  conversation(): Promise<never> {
    return Promise.reject(new Error("not part of the fake"));
  }

  wait(): Promise<RunResult> {
    return this.outcome;
  }

  cancel(): Promise<void> {
    this.fake.cancels.push(Date.now());
    this.finish("cancelled");
    return Promise.resolve();
  }

  steer(text: string): Promise<SteerAckOutcome> {
    this.fake.steers.push(text);
    if (this.fake.steerOutcome === "complete_delivered") {
      this.push(assistant(this.agentId, this.id, `steered: ${text}`));
      this.finish("finished");
    }
    return Promise.resolve(this.fake.steerOutcome);
  }

  onDidChangeStatus(listener: (status: RunStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function assistant(agentId: string, runId: string, text: string): SDKMessage {
  return { type: "assistant", agent_id: agentId, run_id: runId, message: { role: "assistant", content: [{ type: "text", text }] } };
}

export function fakeCursorSdk(): FakeCursor {
  let agents = 0;
  /** The messages each agent was sent, by agent id: the fake's store. */
  const history = new Map<string, string[]>();
  const runsOf = new Map<string, number>();

  function handle(agentId: string, options: Partial<AgentOptions>): SDKAgent {
    return {
      agentId,
      model: options.model,
      send: (message, sendOptions) => {
        const text = typeof message === "string" ? message : message.text;
        fake.sends.push({ text, options: sendOptions });
        const earlier = [...(history.get(agentId) ?? [])];
        history.get(agentId)?.push(text);
        const count = (runsOf.get(agentId) ?? 0) + 1;
        runsOf.set(agentId, count);
        const run = new FakeRun(`run-${count}`, agentId, fake);
        queueMicrotask(() => void play(run, text, options, earlier));
        return Promise.resolve(run);
      },
      close: () => undefined,
      reload: () => Promise.resolve(),
      [Symbol.asyncDispose]: () => Promise.resolve(),
      listArtifacts: () => Promise.resolve([]),
      downloadArtifact: () => Promise.reject(new Error("not part of the fake")),
      getUsage: () => Promise.reject(new Error("not part of the fake")),
    };
  }

  const fake: FakeCursor = {
    created: [],
    resumed: [],
    sends: [],
    steers: [],
    cancels: [],
    steerOutcome: "complete_delivered",
    failCreate: null,
    sdk: {
      Agent: {
        create: (options: AgentOptions): Promise<SDKAgent> => {
          fake.created.push(options);
          if (fake.failCreate !== null) return Promise.reject(fake.failCreate);
          const agentId = `agent-${++agents}`;
          history.set(agentId, []);
          return Promise.resolve(handle(agentId, options));
        },
        resume: (agentId: string, options?: Partial<AgentOptions>): Promise<SDKAgent> => {
          fake.resumed.push({ agentId, options });
          if (fake.failCreate !== null) return Promise.reject(fake.failCreate);
          if (!history.has(agentId)) return Promise.reject(new Error(`Agent ${agentId} not found`));
          return Promise.resolve(handle(agentId, options ?? {}));
        },
      },
    },
  };
  return fake;
}

async function play(run: FakeRun, text: string, options: Partial<AgentOptions>, earlier: readonly string[]): Promise<void> {
  run.push({ type: "status", agent_id: run.agentId, run_id: run.id, status: "RUNNING" });
  if (text === "hang") return;
  if (text === "fail") return run.finish("error", "model unavailable");
  if (text.startsWith("fail: ")) return run.finish("error", text.slice("fail: ".length));
  if (text.includes("recall")) {
    run.push(assistant(run.agentId, run.id, `recall: ${earlier.join(" | ")}`));
    return run.finish("finished");
  }
  if (text === "ask") {
    const tool = options.local?.customTools?.loom_ask_user;
    if (tool === undefined) return run.finish("error", "no loom_ask_user tool");
    run.push({ type: "tool_call", agent_id: run.agentId, run_id: run.id, call_id: "call-ask", name: "loom_ask_user", status: "running", args: { questions: ["Proceed?"] } });
    const result = await tool.execute({ questions: ["Proceed?"] }, { toolCallId: "call-ask" });
    const first = typeof result === "object" && result !== null && !Array.isArray(result) && Array.isArray(result.content) ? (result.content[0] as { type?: string; text?: string } | undefined) : undefined;
    const answer = first?.type === "text" ? (first.text ?? "") : JSON.stringify(result);
    run.push({ type: "tool_call", agent_id: run.agentId, run_id: run.id, call_id: "call-ask", name: "loom_ask_user", status: "completed", args: { questions: ["Proceed?"] }, result });
    run.push(assistant(run.agentId, run.id, `answer: ${answer}`));
    return run.finish("finished");
  }
  run.push(assistant(run.agentId, run.id, `echo: ${text}`));
  run.push({ type: "usage", agent_id: run.agentId, run_id: run.id, usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 4, cacheWriteTokens: 0, totalTokens: 16 } });
  run.finish("finished");
}
