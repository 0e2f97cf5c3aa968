/**
 * `{{name.path}}` templating for scripted steps (pure). A template names a
 * script variable (a `call` result stored with `as`, `answer`, `answers`,
 * `approval`) and optionally a dotted path into it; numeric segments index
 * arrays: `{{list.threads.0.id}}`.
 *
 * A string that is exactly one template inserts the raw value where the
 * field accepts any JSON (tool `args`); everywhere else, and when embedded in
 * other text, a string value is inserted as is and any other value as JSON.
 * A name that is not defined, or a path that does not exist, is an error:
 * a script never silently inserts "undefined".
 */

export const TemplateErrorCode = {
  unknownVariable: "unknown_variable",
  missingPath: "missing_path",
  malformed: "malformed_template",
} as const;
export type TemplateErrorCode = (typeof TemplateErrorCode)[keyof typeof TemplateErrorCode];

/** A template that cannot be resolved. Never retryable: the script must change. */
export class TemplateError extends Error {
  readonly retryable = false;
  constructor(
    readonly code: TemplateErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "TemplateError";
  }
}

/** Script variables by name. Values are JSON-like (tool results, answers). */
export type ScriptVariables = ReadonlyMap<string, unknown>;

const TEMPLATE = /\{\{([^{}]*)\}\}/g;
const WHOLE_TEMPLATE = /^\{\{([^{}]*)\}\}$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Whether `name` may be used as a variable name (`as` of a call step). */
export function isVariableName(name: string): boolean {
  return VARIABLE_NAME.test(name);
}

/** Render every template in `text` as a string. */
export function renderTemplate(text: string, variables: ScriptVariables): string {
  return text.replace(TEMPLATE, (_match, expression: string) => stringify(lookup(expression, variables)));
}

/**
 * Resolve templates recursively in a JSON-like value: strings are rendered,
 * a whole-string template becomes the raw value, arrays and objects are
 * copied with their members resolved.
 */
export function resolveTemplates(value: unknown, variables: ScriptVariables): unknown {
  if (typeof value === "string") {
    const whole = WHOLE_TEMPLATE.exec(value);
    return whole === null ? renderTemplate(value, variables) : lookup(whole[1] ?? "", variables);
  }
  if (Array.isArray(value)) {
    return value.map((member: unknown) => resolveTemplates(member, variables));
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      out[key] = resolveTemplates(member, variables);
    }
    return out;
  }
  return value;
}

/** The value `expression` ("name.path.0") names. */
function lookup(expression: string, variables: ScriptVariables): unknown {
  const trimmed = expression.trim();
  const segments = trimmed.split(".");
  const [name, ...path] = segments;
  if (name === undefined || !isVariableName(name) || path.some((segment) => segment === "")) {
    throw new TemplateError(
      TemplateErrorCode.malformed,
      `malformed template {{${expression}}}: expected {{name}} or {{name.path}}`,
    );
  }
  if (!variables.has(name)) {
    const known = [...variables.keys()];
    throw new TemplateError(
      TemplateErrorCode.unknownVariable,
      `unknown variable "${name}" in {{${trimmed}}}; defined so far: ${known.length > 0 ? known.join(", ") : "none"}`,
    );
  }
  let current: unknown = variables.get(name);
  let walked = name;
  for (const segment of path) {
    const next = member(current, segment);
    if (next === undefined) {
      throw new TemplateError(
        TemplateErrorCode.missingPath,
        `{{${trimmed}}}: ${walked} has no "${segment}" (it is ${describe(current)})`,
      );
    }
    current = next.value;
    walked = `${walked}.${segment}`;
  }
  return current;
}

/** One step into a value; undefined when there is no such member. */
function member(value: unknown, segment: string): { readonly value: unknown } | undefined {
  if (Array.isArray(value)) {
    if (!/^\d+$/.test(segment)) return undefined;
    const index = Number(segment);
    return index < value.length ? { value: value[index] as unknown } : undefined;
  }
  if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, segment)) {
    return { value: value[segment] };
  }
  return undefined;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return "null";
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    return keys.length > 0 ? `an object with ${keys.join(", ")}` : "an empty object";
  }
  return `a ${typeof value}`;
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
