import { type QuickJSContext, type QuickJSDeferredPromise, type QuickJSHandle, type QuickJSRuntime, getQuickJS } from "quickjs-emscripten";

/**
 * The workflow script sandbox (docs/workflows.md): a WebAssembly QuickJS
 * interpreter with no file, network, clock or randomness access, a memory
 * limit and a step limit. A script written for Claude Code's workflow API
 * runs unchanged: `export const meta = {...}`, then top-level code that
 * awaits `agent(prompt, options)`, `parallel(thunks)`, `pipeline(items,
 * ...stages)`, `phase(title)` and reads `args`; its `return` value is the
 * workflow's result. The body runs as the body of an async function.
 *
 * Every agent() call goes to the host with a key that does not depend on
 * timing: the call's prompt and options, and its ordinal among the calls
 * with the same prompt and options. So a re-run of the same script asks for
 * the same keys whatever order parallel work finished in, which is what lets
 * the host answer finished calls from its journal (deterministic replay).
 */

export interface AgentCall {
  readonly prompt: string;
  readonly options: Readonly<Record<string, unknown>>;
  /** The nth call (from 0) with this exact prompt and options in this run of the script. */
  readonly ordinal: number;
  /** The phase the script was in when it made the call (the last phase() title, or options.phase). */
  readonly phase: string | null;
}

export interface SandboxHost {
  agent(call: AgentCall): Promise<unknown>;
  onPhase?(title: string): void;
}

export interface SandboxLimits {
  /** Interrupt-handler ticks (roughly every few thousand bytecode instructions) before the script is stopped. */
  readonly maxSteps: number;
  readonly memoryBytes: number;
  readonly stackBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { maxSteps: 200_000, memoryBytes: 64 * 1024 * 1024, stackBytes: 1024 * 1024 };

/**
 * How the sandbox lets the event loop turn between steps of a script, so the
 * host's promise callbacks land: one round of `setImmediate` by default. The
 * deterministic simulator passes one that also counts the turn as activity,
 * so its idle check (SimWorld.settle) waits for the step (docs/simulation.md).
 */
export type SandboxTurn = () => Promise<void>;

export const NEXT_TURN: SandboxTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Load the WebAssembly interpreter. Every sandbox loads it on first use from
 * disk (once per process); awaiting this first makes later sandboxes start
 * without I/O, which the simulator needs to replay a seed (docs/simulation.md).
 */
export async function loadSandbox(): Promise<void> {
  await getQuickJS();
}

export interface WorkflowMeta {
  readonly name?: string;
  readonly description?: string;
  readonly phases?: readonly { readonly title: string; readonly detail?: string }[];
}

export type SandboxOutcome =
  | { readonly ok: true; readonly result: unknown; readonly meta: WorkflowMeta | null }
  | { readonly ok: false; readonly error: string; readonly meta: WorkflowMeta | null };

/** Thrown into the script for anything it may not reach. */
const DENIED = (what: string) => `workflow scripts have no ${what}: they must replay deterministically (docs/workflows.md)`;

const PRELUDE = `
"use strict";
const __loomDeny = (what) => { throw new Error(${JSON.stringify(DENIED("__WHAT__"))}.replace("__WHAT__", what)); };
for (const name of ["Date"]) Object.defineProperty(globalThis, name, { get() { __loomDeny("clock (" + name + ")"); }, configurable: false });
Math.random = () => __loomDeny("randomness (Math.random)");
for (const name of ["fetch", "XMLHttpRequest", "WebSocket"]) Object.defineProperty(globalThis, name, { get() { __loomDeny("network access (" + name + ")"); }, configurable: false });
for (const name of ["require", "process", "std", "os"]) Object.defineProperty(globalThis, name, { get() { __loomDeny("file system or process access (" + name + ")"); }, configurable: false });
for (const name of ["setTimeout", "setInterval"]) Object.defineProperty(globalThis, name, { get() { __loomDeny("timers (" + name + ")"); }, configurable: false });
globalThis.agent = (prompt, options) => {
  if (typeof prompt !== "string" || prompt.length === 0) throw new TypeError("agent(prompt, options): prompt must be a non-empty string");
  if (options !== undefined && (typeof options !== "object" || options === null || Array.isArray(options))) throw new TypeError("agent(prompt, options): options must be an object");
  return __loomAgent(prompt, JSON.stringify(options === undefined ? {} : options));
};
globalThis.parallel = (thunks) => {
  if (!Array.isArray(thunks)) throw new TypeError("parallel(thunks): thunks must be an array of functions");
  return Promise.all(thunks.map((thunk) => (typeof thunk === "function" ? thunk() : thunk)));
};
globalThis.pipeline = (items, ...stages) => {
  if (!Array.isArray(items)) throw new TypeError("pipeline(items, ...stages): items must be an array");
  return Promise.all(items.map(async (item, index) => { let value = item; for (const stage of stages) value = await stage(value, index, item); return value; }));
};
globalThis.phase = (title) => __loomPhase(String(title));
`;

/** The script as the body of an async function: `export` dropped, `meta` also published to the host. */
function wrapScript(script: string): string {
  const body = script
    .replace(/^\s*export\s+const\s+meta\s*=/m, "const meta = globalThis.__loomMeta =")
    .replace(/^(\s*)export\s+(?=(const|let|var|function|async\s+function|class)\b)/gm, "$1");
  return `globalThis.__loomMain = (async () => {\n${body}\n})();`;
}

function toHandle(vm: QuickJSContext, value: unknown): QuickJSHandle {
  if (value === undefined) return vm.undefined;
  return vm.unwrapResult(vm.evalCode(`(${JSON.stringify(value)})`));
}

function errorText(vm: QuickJSContext, handle: QuickJSHandle): string {
  const error = vm.dump(handle) as unknown;
  if (typeof error === "object" && error !== null && "message" in error) {
    const { name, message } = error as { name?: string; message: string };
    if (name === "InternalError" && message === "interrupted") return "the workflow script exceeded its step limit";
    if (name === "InternalError" && /out of memory/.test(message)) return "the workflow script exceeded its memory limit";
    return `${name ?? "Error"}: ${message}`;
  }
  return String(error);
}

/** A fresh QuickJS runtime and context with the limits set; the caller disposes both. */
async function newSandbox(limits: SandboxLimits): Promise<{ runtime: QuickJSRuntime; vm: QuickJSContext }> {
  const QuickJS = await getQuickJS();
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  let steps = 0;
  runtime.setInterruptHandler(() => ++steps > limits.maxSteps);
  return { runtime, vm: runtime.newContext() };
}

/**
 * Install the host functions and `args`, evaluate the prelude and library,
 * and start the script: the evaluation's result, for the caller to dispose.
 */
function startScript(
  vm: QuickJSContext,
  hostFns: { readonly agent: (prompt: QuickJSHandle, options: QuickJSHandle) => QuickJSHandle; readonly phase: (title: QuickJSHandle) => void },
  script: string,
  args: unknown,
  library: string,
) {
  for (const [name, fn] of [
    ["__loomAgent", hostFns.agent],
    ["__loomPhase", hostFns.phase],
  ] as const) {
    const handle = vm.newFunction(name, fn);
    vm.setProp(vm.global, name, handle);
    handle.dispose();
  }
  const argsHandle = toHandle(vm, args ?? null);
  vm.setProp(vm.global, "args", argsHandle);
  if (argsHandle !== vm.undefined) argsHandle.dispose();
  vm.unwrapResult(vm.evalCode(PRELUDE, "loom-prelude.js")).dispose();
  if (library !== "") vm.unwrapResult(vm.evalCode(library, "loom-library.js")).dispose();
  return vm.evalCode(wrapScript(script), "workflow.js");
}

function readMeta(vm: QuickJSContext): WorkflowMeta | null {
  const handle = vm.getProp(vm.global, "__loomMeta");
  const meta = vm.dump(handle) as WorkflowMeta | undefined;
  handle.dispose();
  return meta ?? null;
}

/** Run a workflow script to its end; a script error, a denied access or a limit is an outcome, never a throw. */
export async function runWorkflowScript(
  script: string,
  args: unknown,
  host: SandboxHost,
  limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
  /** JavaScript evaluated after the built-ins and before the script: the workflow library (library.ts). */
  library = "",
  turn: SandboxTurn = NEXT_TURN,
): Promise<SandboxOutcome> {
  const { runtime, vm } = await newSandbox(limits);
  const ordinals = new Map<string, number>();
  let currentPhase: string | null = null;
  /** agent() calls not answered yet: a script can end (a parallel() that rejected) while some still run. */
  const unanswered = new Set<QuickJSDeferredPromise>();
  /** Set once the script ended and its interpreter is disposed: a later answer has nowhere to go. */
  let closed = false;
  /** Counts agent() answers, so a wait that starts after one arrived does not sleep. */
  let answers = 0;
  let wake: (() => void) | null = null;
  const pump = () => {
    answers += 1;
    wake?.();
  };
  try {
    const agent = (promptHandle: QuickJSHandle, optionsHandle: QuickJSHandle) => {
      const prompt = vm.getString(promptHandle);
      const options = JSON.parse(vm.getString(optionsHandle)) as Record<string, unknown>;
      const key = JSON.stringify([prompt, options]);
      const ordinal = ordinals.get(key) ?? 0;
      ordinals.set(key, ordinal + 1);
      const phase = typeof options.phase === "string" ? options.phase : currentPhase;
      const deferred = vm.newPromise();
      unanswered.add(deferred);
      host.agent({ prompt, options, ordinal, phase }).then(
        (value) => {
          if (closed) return;
          const handle = toHandle(vm, value);
          deferred.resolve(handle);
          if (handle !== vm.undefined) handle.dispose();
        },
        (error: unknown) => {
          if (closed) return;
          const handle = vm.newError({ name: (error as { name?: string }).name ?? "Error", message: error instanceof Error ? error.message : String(error) });
          // A typed failure (budget_exceeded, ...) keeps its code, so the script can catch it by code.
          const code = (error as { code?: unknown }).code;
          if (typeof code === "string") {
            const codeHandle = vm.newString(code);
            vm.setProp(handle, "code", codeHandle);
            codeHandle.dispose();
          }
          deferred.reject(handle);
          handle.dispose();
        },
      ).finally(() => {
        if (closed) return;
        unanswered.delete(deferred);
        deferred.dispose();
        pump();
      });
      return deferred.handle;
    };
    const phase = (titleHandle: QuickJSHandle) => {
      currentPhase = vm.getString(titleHandle);
      host.onPhase?.(currentPhase);
    };
    const started = startScript(vm, { agent, phase }, script, args, library);
    if (started.error !== undefined) {
      const error = errorText(vm, started.error);
      started.error.dispose();
      return { ok: false, error, meta: readMeta(vm) };
    }
    started.value.dispose();
    const main = vm.getProp(vm.global, "__loomMain");
    const settled = vm.resolvePromise(main);
    main.dispose();
    let outcome: Awaited<typeof settled> | null = null;
    void settled.then((value) => {
      outcome = value;
    });
    // Run the job queue, let the host's promise callbacks land, and sleep until an agent() answer arrives.
    for (;;) {
      // An answer that lands from here on has jobs the next round runs: only with none since does the loop sleep.
      const seen = answers;
      runtime.executePendingJobs();
      await turn();
      if (outcome !== null) break;
      if (unanswered.size === 0 && !runtime.hasPendingJob()) return { ok: false, error: "the workflow script awaits a promise that can never settle", meta: readMeta(vm) };
      if (unanswered.size > 0 && answers === seen) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
    const final = outcome as Awaited<typeof settled>;
    const meta = readMeta(vm);
    if (final.error !== undefined) {
      const error = errorText(vm, final.error);
      final.error.dispose();
      return { ok: false, error, meta };
    }
    const result = vm.dump(final.value) as unknown;
    final.value.dispose();
    return { ok: true, result, meta };
  } finally {
    // Calls still running when the script ended (their parallel() rejected, or it returned without them) hold promises in the interpreter: release them first, or freeing it aborts.
    closed = true;
    for (const deferred of unanswered) deferred.dispose();
    vm.dispose();
    runtime.dispose();
  }
}

export type ScriptInspection = { readonly ok: true; readonly meta: WorkflowMeta | null } | { readonly ok: false; readonly error: string };

/**
 * Check a script before anything is recorded: it must compile, and its code
 * up to the first await must not throw (a bad `meta`, `args` it cannot read).
 * agent() calls made on the way are never answered and never reach a host.
 */
export async function inspectWorkflowScript(script: string, args: unknown, library = "", limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<ScriptInspection> {
  const { runtime, vm } = await newSandbox(limits);
  try {
    const pending: { dispose(): void }[] = [];
    const agent = () => {
      const deferred = vm.newPromise();
      pending.push(deferred);
      return deferred.handle;
    };
    const started = startScript(vm, { agent, phase: () => undefined }, script, args, library);
    if (started.error !== undefined) {
      const error = errorText(vm, started.error);
      started.error.dispose();
      return { ok: false, error };
    }
    started.value.dispose();
    runtime.executePendingJobs();
    const main = vm.getProp(vm.global, "__loomMain");
    const state = vm.getPromiseState(main);
    main.dispose();
    let failure: string | null = null;
    if (state.type === "rejected") {
      failure = errorText(vm, state.error);
      state.error.dispose();
    } else if (state.type === "fulfilled") {
      state.value.dispose();
    }
    const meta = readMeta(vm);
    for (const deferred of pending) deferred.dispose();
    return failure === null ? { ok: true, meta } : { ok: false, error: failure };
  } finally {
    vm.dispose();
    runtime.dispose();
  }
}
