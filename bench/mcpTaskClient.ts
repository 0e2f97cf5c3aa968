import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { abortIsolatingFetch } from "../src/client/abortIsolatingFetch.js";
import { now } from "./stats.js";

/**
 * The agent's side of bench/mcpTaskBench.ts, in its own process so the
 * server's CPU is measured alone: one SDK client over Streamable HTTP with a
 * parent thread's credential. The server sends a block ({ way, count }); this
 * process runs that many delegations that way and answers their times, each
 * phase's, and its own CPU.
 */
export type Way = "wait" | "task" | "async";
export interface Block {
  readonly way: Way;
  readonly count: number;
}
export interface BlockTimes {
  readonly ms: number[];
  readonly phases: { readonly create: number[]; readonly get: number[]; readonly result: number[] };
  readonly clientCpuMicros: number;
}

const [url, token, childTask] = process.argv.slice(2);
if (url === undefined || token === undefined || childTask === undefined || process.send === undefined) throw new Error("usage: node mcpTaskClient.js URL TOKEN CHILD_TASK, forked with an IPC channel");
const send = process.send.bind(process);

const client = new Client({ name: "loom-bench-tasks", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: abortIsolatingFetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
const args = { task: childTask, target: { providerInstanceId: "scripted" } };
const resultOf = (structured: unknown) => (structured as { workState?: string } | undefined)?.workState;

async function once(way: Way, phases: BlockTimes["phases"]): Promise<void> {
  if (way === "wait") {
    const result = await client.callTool({ name: "delegate_task", arguments: { ...args, mode: "wait" } });
    if (resultOf(result.structuredContent) !== "result_available") throw new Error("a wait-mode delegation ended without its result");
    return;
  }
  if (way === "async") {
    await client.callTool({ name: "delegate_task", arguments: { ...args, mode: "async" } });
    return;
  }
  let at = now();
  const lap = (into: number[]) => {
    const next = now();
    into.push(Number(next - at) / 1e6);
    at = next;
  };
  const created = await client.request({ method: "tools/call", params: { name: "delegate_task", arguments: args } }, CreateTaskResultSchema, { task: { ttl: 600_000 } });
  lap(phases.create);
  await client.experimental.tasks.getTask(created.task.taskId);
  lap(phases.get);
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  lap(phases.result);
  if (resultOf(result.structuredContent) !== "result_available") throw new Error("a task's result came without the child's result");
}

process.on("message", (message: Block | "close") => {
  if (message === "close") {
    void client.close().finally(() => process.exit(0));
    return;
  }
  void (async () => {
    const times: BlockTimes = { ms: [], phases: { create: [], get: [], result: [] }, clientCpuMicros: 0 };
    const cpu = process.cpuUsage();
    for (let i = 0; i < message.count; i++) {
      const start = now();
      await once(message.way, times.phases);
      times.ms.push(Number(now() - start) / 1e6);
    }
    const used = process.cpuUsage(cpu);
    send({ ...times, clientCpuMicros: used.user + used.system });
  })().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
});
send("ready");
