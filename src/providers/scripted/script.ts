import { z } from "zod";
import type { ApprovalRequestKind, BackgroundTaskKind, CompactionItem, FileSearchItem, ProposedPlanItem, WebSearchItem } from "../events.js";
import { isVariableName, renderTemplate, resolveTemplates } from "./template.js";
import type { ScriptVariables } from "./template.js";

/**
 * What a scripted turn does (pure). A turn input that is a JSON object with a
 * `script` key is a script: an array of steps run in order. Any other input
 * gets the echo reply. The whole script is validated before the first step
 * runs, so a malformed script fails its turn without side effects.
 */

export const ScriptStepKind = {
  say: "say",
  call: "call",
  sleep: "sleep",
  ask: "ask",
  approve: "approve",
  write: "write",
  run: "run",
  background: "background",
  fail: "fail",
  next: "next",
  emit: "emit",
} as const;
export type ScriptStepKind = (typeof ScriptStepKind)[keyof typeof ScriptStepKind];
const STEP_KINDS = Object.values(ScriptStepKind);

export type ScriptStep =
  | { readonly kind: "say"; readonly text: string; readonly stream?: boolean }
  | {
      readonly kind: "call";
      readonly tool: string;
      readonly args: Readonly<Record<string, unknown>>;
      /** The variable the result is stored under; null: not stored. */
      readonly as: string | null;
    }
  | { readonly kind: "sleep"; readonly ms: number }
  /** `async`: the question does not block the turn (the script goes on). */
  | { readonly kind: "ask"; readonly question: string; readonly async: boolean }
  | {
      readonly kind: "approve";
      readonly requestKind: ApprovalRequestKind;
      readonly detail: string;
      /** Null: a title derived from the kind. */
      readonly title: string | null;
    }
  | { readonly kind: "write"; readonly path: string; readonly content: string }
  | { readonly kind: "run"; readonly command: string }
  /** A shell command left running in the background (reported as background work); `awaited`: the turn's result waits for it. */
  | { readonly kind: "background"; readonly command: string; readonly taskKind: BackgroundTaskKind; readonly awaited: boolean }
  | { readonly kind: "fail"; readonly message: string }
  /** The steps this session runs on its next turn whose input is not a script (a notice, a repair request). */
  | { readonly kind: "next"; readonly steps: readonly ScriptStep[] }
  /** A provider item of a kind no other step makes, reported as the turn's next item. */
  | { readonly kind: "emit"; readonly item: EmittedItem };

/** What an `emit` step reports: the provider items a real agent makes that the other steps do not. */
export type EmittedItem = ProposedPlanItem | FileSearchItem | WebSearchItem | CompactionItem;

export type TurnPlan =
  | { readonly kind: "echo"; readonly text: string }
  | { readonly kind: "script"; readonly steps: readonly ScriptStep[] }
  /** The input is a script but not a valid one; `message` names the step. */
  | { readonly kind: "invalid"; readonly message: string };

const Text = z.string({ error: "must be a string" });
const NonEmpty = Text.min(1, { error: "must not be empty" });
const VariableName = Text.refine(isVariableName, {
  error: "must be a variable name (letters, digits, '_' or '-', not starting with a digit)",
});

/** Only the wrong-type message is ours; unknown keys keep zod's message, which names them. */
const objectError = (shape: string) => (issue: { readonly code?: string }) =>
  issue.code === "invalid_type" ? `must be an object ${shape}` : undefined;

const StepSchemas = {
  say: z.strictObject({ say: Text, stream: z.boolean().optional() }),
  call: z.strictObject({
    call: NonEmpty,
    args: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
    as: VariableName.optional(),
  }),
  sleep: z.strictObject({
    sleep: z
      .number({ error: "must be a number of milliseconds" })
      .int({ error: "must be a whole number of milliseconds" })
      .nonnegative({ error: "must not be negative" }),
  }),
  ask: z.strictObject({ ask: NonEmpty, async: z.boolean({ error: "must be true or false" }).optional() }),
  approve: z.strictObject({
    approve: z.strictObject(
      {
        kind: z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission"], {
          error: "must be one of command, file-read, file-change, mcp-elicitation, permission",
        }),
        detail: Text,
        title: NonEmpty.optional(),
      },
      { error: objectError("{ kind, detail }") },
    ),
  }),
  write: z.strictObject({
    write: z.strictObject({ path: NonEmpty, content: Text }, { error: objectError("{ path, content }") }),
  }),
  run: z.strictObject({ run: NonEmpty }),
  background: z.strictObject({
    background: NonEmpty,
    kind: z.enum(["background_task", "command", "monitor", "subagent"], { error: "must be one of background_task, command, monitor, subagent" }).optional(),
    awaited: z.boolean({ error: "must be true or false" }).optional(),
  }),
  fail: z.strictObject({ fail: Text }),
  next: z.strictObject({ next: z.array(z.unknown(), { error: "must be a list of steps" }) }),
  emit: z.strictObject({
    emit: z.discriminatedUnion(
      "kind",
      [
        z.strictObject({
          kind: z.literal("proposed_plan"),
          title: Text.optional(),
          markdown: Text.optional(),
          steps: z.array(z.strictObject({ text: NonEmpty, status: z.enum(["pending", "in_progress", "completed"]) })),
        }),
        z.strictObject({
          kind: z.literal("file_search"),
          query: NonEmpty,
          matches: z.array(z.strictObject({ path: NonEmpty, line: z.number().int().positive().optional(), preview: Text.optional() })),
          truncated: z.boolean().optional(),
        }),
        z.strictObject({
          kind: z.literal("web_search"),
          query: NonEmpty,
          action: z.enum(["search", "open_page", "find_in_page"]).optional(),
          results: z.array(z.strictObject({ title: Text, url: NonEmpty, snippet: Text.optional() })),
        }),
        z.strictObject({
          kind: z.literal("compaction"),
          trigger: z.enum(["auto", "manual"]).optional(),
          tokensBefore: z.number().int().nonnegative().optional(),
          tokensAfter: z.number().int().nonnegative().optional(),
          summary: Text.optional(),
        }),
      ],
      { error: "must be an object whose kind is proposed_plan, file_search, web_search or compaction" },
    ),
  }),
} as const;

/** An `emit` step's item with its omitted fields filled in. */
function emittedItem(raw: z.output<typeof StepSchemas.emit>["emit"]): EmittedItem {
  switch (raw.kind) {
    case "proposed_plan":
      return { kind: raw.kind, title: raw.title ?? null, markdown: raw.markdown ?? "", steps: raw.steps };
    case "file_search":
      return { kind: raw.kind, query: raw.query, matches: raw.matches.map((m) => ({ path: m.path, line: m.line ?? null, preview: m.preview ?? null })), truncated: raw.truncated ?? false };
    case "web_search":
      return { kind: raw.kind, query: raw.query, action: raw.action ?? "search", results: raw.results.map((r) => ({ title: r.title, url: r.url, snippet: r.snippet ?? null })) };
    case "compaction":
      return { kind: raw.kind, trigger: raw.trigger ?? "auto", tokensBefore: raw.tokensBefore ?? null, tokensAfter: raw.tokensAfter ?? null, summary: raw.summary ?? null };
  }
}

const CONTEXT_OPEN = "<loom_context>";
const CONTEXT_CLOSE = "</loom_context>";

/**
 * Split a turn input into the context Loom put before the message (a
 * `<loom_context>` element: a provider switch's handoff, a fork or merge-back
 * transfer; src/engine/runInput.ts) and the message itself. Without one the
 * context is "" and the message is the whole input.
 */
export function splitTurnInput(input: string): { readonly context: string; readonly message: string } {
  if (!input.startsWith(CONTEXT_OPEN)) return { context: "", message: input };
  const end = input.indexOf(CONTEXT_CLOSE);
  if (end < 0) return { context: "", message: input };
  const close = end + CONTEXT_CLOSE.length;
  return { context: input.slice(0, close), message: input.slice(close).replace(/^\s+/, "") };
}

/** Decide what a turn input asks for: a script after any context Loom put first, else the echo. Never throws. */
export function parseTurnInput(input: string): TurnPlan {
  const found = scriptOf(splitTurnInput(input).message);
  if (found === undefined) {
    return { kind: "echo", text: input };
  }
  if ("problem" in found) {
    return { kind: "invalid", message: `invalid script: ${found.problem}` };
  }
  const { script } = found;
  if (!Array.isArray(script)) {
    return { kind: "invalid", message: "invalid script: `script` must be an array of steps" };
  }
  const steps: ScriptStep[] = [];
  for (const [index, raw] of script.entries()) {
    const parsed = parseStep(raw);
    if (typeof parsed === "string") {
      return { kind: "invalid", message: `invalid script: script[${index}]: ${parsed}` };
    }
    steps.push(parsed);
  }
  return { kind: "script", steps };
}

/** The `script` member of a JSON object input; undefined when the input is not one. */
function scriptOf(input: string): { readonly script: unknown } | { readonly problem: string } | undefined {
  const trimmed = input.trim();
  if (!trimmed.startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // A script followed by instructions Loom appended (after a blank line, e.g. an output schema) still runs.
    const paragraph = trimmed.indexOf("\n\n");
    if (paragraph < 0) return undefined;
    try {
      value = JSON.parse(trimmed.slice(0, paragraph));
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null || !("script" in value)) return undefined;
  const extra = Object.keys(value).filter((key) => key !== "script");
  // A typo next to `script` should not silently turn the script into an echo.
  return extra.length > 0
    ? { problem: `unexpected key${extra.length > 1 ? "s" : ""} ${extra.join(", ")} next to \`script\`` }
    : { script: value.script };
}

/** A parsed step, or a message saying what is wrong with it. */
function parseStep(raw: unknown): ScriptStep | string {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return `a step must be an object with one of ${STEP_KINDS.join(", ")}`;
  }
  const keys = STEP_KINDS.filter((kind) => kind in raw);
  const [kind] = keys;
  if (kind === undefined) {
    const got = Object.keys(raw);
    return `unknown step${got.length > 0 ? ` (keys: ${got.join(", ")})` : ""}; expected one of ${STEP_KINDS.join(", ")}`;
  }
  if (keys.length > 1) {
    return `a step has exactly one kind, this one has ${keys.join(" and ")}`;
  }
  return toStep(kind, raw);
}

function toStep(kind: ScriptStepKind, raw: object): ScriptStep | string {
  switch (kind) {
    case "say":
      return check(StepSchemas.say, raw, kind, (s) => (s.stream === true ? { kind, text: s.say, stream: true } : { kind, text: s.say }));
    case "call":
      return check(StepSchemas.call, raw, kind, (s) => ({ kind, tool: s.call, args: s.args ?? {}, as: s.as ?? null }));
    case "sleep":
      return check(StepSchemas.sleep, raw, kind, (s) => ({ kind, ms: s.sleep }));
    case "ask":
      return check(StepSchemas.ask, raw, kind, (s) => ({ kind, question: s.ask, async: s.async ?? false }));
    case "approve":
      return check(StepSchemas.approve, raw, kind, (s) => ({
        kind,
        requestKind: s.approve.kind,
        detail: s.approve.detail,
        title: s.approve.title ?? null,
      }));
    case "write":
      return check(StepSchemas.write, raw, kind, (s) => ({ kind, path: s.write.path, content: s.write.content }));
    case "run":
      return check(StepSchemas.run, raw, kind, (s) => ({ kind, command: s.run }));
    case "background":
      return check(StepSchemas.background, raw, kind, (s) => ({ kind, command: s.background, taskKind: s.kind ?? "command", awaited: s.awaited ?? false }));
    case "fail":
      return check(StepSchemas.fail, raw, kind, (s) => ({ kind, message: s.fail }));
    case "next": {
      const parsed = check(StepSchemas.next, raw, kind, (s) => s.next);
      if (typeof parsed === "string") return parsed;
      const steps: ScriptStep[] = [];
      for (const [index, inner] of parsed.entries()) {
        const step = parseStep(inner);
        if (typeof step === "string") return `next[${index}]: ${step}`;
        steps.push(step);
      }
      return { kind, steps };
    }
    case "emit":
      return check(StepSchemas.emit, raw, kind, (s) => ({ kind, item: emittedItem(s.emit) }));
    default: {
      const unexpected: never = kind;
      return `unknown step ${String(unexpected)}`;
    }
  }
}

function check<S extends z.ZodType, T>(
  schema: S,
  raw: object,
  kind: ScriptStepKind,
  build: (parsed: z.output<S>) => T,
): T | string {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return build(parsed.data);
  // Paths start at the step's own key ("say", "approve.kind"); step-level issues get the kind.
  const problems = parsed.error.issues.map((issue) => {
    const where = issue.path.map(String).join(".");
    return `${where === "" ? kind : where}: ${issue.message}`;
  });
  return problems.join("; ");
}

/**
 * The step with its templates resolved against the variables defined so far.
 * Throws TemplateError. Tool arguments keep raw values for whole-string
 * templates; every other field is text.
 */
export function resolveStep(step: ScriptStep, variables: ScriptVariables): ScriptStep {
  const render = (text: string): string => renderTemplate(text, variables);
  switch (step.kind) {
    case "say":
      return { ...step, text: render(step.text) };
    case "call":
      return { ...step, tool: render(step.tool), args: resolveTemplates(step.args, variables) as Record<string, unknown> };
    case "sleep":
      return step;
    case "ask":
      return { ...step, question: render(step.question) };
    case "approve":
      return { ...step, detail: render(step.detail), title: step.title === null ? null : render(step.title) };
    case "write":
      return { ...step, path: render(step.path), content: render(step.content) };
    case "run":
    case "background":
      return { ...step, command: render(step.command) };
    case "fail":
      return { ...step, message: render(step.message) };
    case "next":
      // Resolved when they run, against that turn's variables.
      return step;
    case "emit":
      // Reported as written: its strings are not templates.
      return step;
    default: {
      const unexpected: never = step;
      throw new Error(`unexpected step ${JSON.stringify(unexpected)}`);
    }
  }
}
