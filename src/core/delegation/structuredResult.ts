import { Ajv, type ValidateFunction } from "ajv";

/**
 * Structured results (docs/delegation.md): a task with an `outputSchema` must end with
 * one JSON value matching it. The schema dialect is JSON Schema draft-07 (the
 * dialect ajv validates by default and agents' structured-output APIs accept);
 * unknown keywords are ignored rather than refused, so schemas written for
 * other tools still load.
 */
export type JsonSchema = Readonly<Record<string, unknown>>;

export type StructuredCheck = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly errors: readonly string[] };

const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });

/** Compiled validators by schema text: compiling is pure, so caching it changes no answer. */
const compiled = new Map<string, ValidateFunction>();
const MAX_CACHED = 500;
/** At most this many validation errors are reported back (to the child and to readers). */
const MAX_ERRORS = 20;

function validatorOf(schema: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  const validate = ajv.compile(schema);
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, validate);
  return validate;
}

/** Why `schema` is not a usable JSON Schema, or null when it is. */
export function schemaProblem(schema: JsonSchema): string | null {
  try {
    validatorOf(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The JSON value a final answer carries: the whole text, else the last fenced
 * ```json block, else the span from the first `{`/`[` to the last `}`/`]`.
 * Agents often wrap a JSON answer in a fence or a sentence; all three forms
 * are accepted so a correct answer is never refused for its wrapping.
 */
export function extractJson(text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } {
  const candidates: string[] = [text.trim()];
  const fences = [...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)];
  const fenced = fences[fences.length - 1]?.[1];
  if (fenced !== undefined) candidates.push(fenced.trim());
  const start = text.search(/[[{]/);
  const end = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      return { ok: true, value: JSON.parse(candidate) as unknown };
    } catch {
      // try the next form
    }
  }
  return { ok: false };
}

/** Check a final answer against the task's schema: the parsed value, or readable errors. */
export function checkStructuredResult(schema: JsonSchema, text: string | null): StructuredCheck {
  if (text === null || text.trim() === "") return { ok: false, errors: ["the final answer is empty; it must be one JSON value"] };
  const parsed = extractJson(text);
  if (!parsed.ok) return { ok: false, errors: ["the final answer is not valid JSON; it must be one JSON value and nothing else"] };
  let validate: ValidateFunction;
  try {
    validate = validatorOf(schema);
  } catch (error) {
    return { ok: false, errors: [`the output schema cannot be compiled: ${error instanceof Error ? error.message : String(error)}`] };
  }
  if (validate(parsed.value)) return { ok: true, value: parsed.value };
  const errors = (validate.errors ?? []).slice(0, MAX_ERRORS).map((error) => {
    const where = error.instancePath === "" ? "(root)" : error.instancePath;
    const extra = error.keyword === "additionalProperties" ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})` : "";
    return `${where} ${error.message ?? "is invalid"}${extra}`;
  });
  return { ok: false, errors: errors.length === 0 ? ["the value does not match the schema"] : errors };
}

/** What the child is told about its answer's shape (appended to its prompt). */
export function outputInstruction(schema: JsonSchema): string {
  return [
    "When you are done, your final message must be exactly one JSON value (no prose, no code fence) matching this JSON Schema:",
    JSON.stringify(schema, null, 2),
  ].join("\n");
}

/** The follow-up turn a child gets once when its answer does not match. */
export function repairInstruction(schema: JsonSchema, errors: readonly string[]): string {
  return [
    "Your final answer does not match the required output schema:",
    ...errors.map((error) => `- ${error}`),
    "",
    "Reply again with exactly one JSON value (no prose, no code fence) matching this JSON Schema:",
    JSON.stringify(schema, null, 2),
  ].join("\n");
}
