import { describe, expect, it } from "vitest";
import { TemplateError, isVariableName, renderTemplate, resolveTemplates } from "./template.js";

const vars = new Map<string, unknown>([
  ["list", { threads: [{ id: "thread:a", n: 1 }, { id: "thread:b", n: 2 }] }],
  ["answer", "yes"],
  ["count", 3],
  ["nothing", null],
]);

describe("renderTemplate", () => {
  it("inserts strings as they are and walks dotted paths with array indexes", () => {
    expect(renderTemplate("first {{list.threads.0.id}}, second {{ list.threads.1.id }}", vars)).toBe(
      "first thread:a, second thread:b",
    );
    expect(renderTemplate("{{answer}}!", vars)).toBe("yes!");
  });

  it("inserts other values as JSON, also for a whole-string template", () => {
    expect(renderTemplate("n={{count}} t={{list.threads.1}}", vars)).toBe('n=3 t={"id":"thread:b","n":2}');
    expect(renderTemplate("{{nothing}}", vars)).toBe("null");
    expect(renderTemplate("{{list}}", vars)).toBe(JSON.stringify(vars.get("list")));
  });

  it("leaves text without templates untouched", () => {
    expect(renderTemplate("no {templates} here {{", vars)).toBe("no {templates} here {{");
  });

  it("an unknown name is an error that names it and the defined variables", () => {
    const error = catchError(() => renderTemplate("{{missing.x}}", vars));
    expect(error).toBeInstanceOf(TemplateError);
    expect(error).toMatchObject({ code: "unknown_variable" });
    expect(error.message).toContain('unknown variable "missing"');
    expect(error.message).toContain("list, answer, count, nothing");
  });

  it("a path that does not exist is an error, never the text undefined", () => {
    const outOfRange = catchError(() => renderTemplate("{{list.threads.5.id}}", vars));
    expect(outOfRange).toMatchObject({ code: "missing_path" });
    expect(outOfRange.message).toContain('list.threads has no "5" (it is an array of 2)');
    expect(catchError(() => renderTemplate("{{answer.length}}", vars))).toMatchObject({ code: "missing_path" });
    expect(catchError(() => renderTemplate("{{list.constructor}}", vars))).toMatchObject({ code: "missing_path" });
    expect(catchError(() => renderTemplate("{{list.threads.x}}", vars))).toMatchObject({ code: "missing_path" });
  });

  it("a malformed template is an error", () => {
    expect(catchError(() => renderTemplate("{{}}", vars))).toMatchObject({ code: "malformed_template" });
    expect(catchError(() => renderTemplate("{{list..threads}}", vars))).toMatchObject({ code: "malformed_template" });
    expect(catchError(() => renderTemplate("{{1abc}}", vars))).toMatchObject({ code: "malformed_template" });
  });
});

describe("resolveTemplates", () => {
  it("a whole-string template inserts the raw value; embedded ones insert text", () => {
    const resolved = resolveTemplates(
      { threadIds: ["{{list.threads.0.id}}"], count: "{{count}}", thread: "{{list.threads.0}}", label: "n={{count}}" },
      vars,
    );
    expect(resolved).toEqual({ threadIds: ["thread:a"], count: 3, thread: { id: "thread:a", n: 1 }, label: "n=3" });
  });

  it("recurses into nested objects and arrays and keeps non-string values", () => {
    expect(resolveTemplates({ a: [{ b: "{{answer}}", c: 7, d: true, e: null }] }, vars)).toEqual({
      a: [{ b: "yes", c: 7, d: true, e: null }],
    });
  });

  it("does not mutate its input", () => {
    const input = { value: "{{answer}}" };
    resolveTemplates(input, vars);
    expect(input).toEqual({ value: "{{answer}}" });
  });
});

describe("isVariableName", () => {
  it("accepts identifiers and rejects paths and leading digits", () => {
    expect(isVariableName("result_1")).toBe(true);
    expect(isVariableName("my-result")).toBe(true);
    expect(isVariableName("a.b")).toBe(false);
    expect(isVariableName("1a")).toBe(false);
    expect(isVariableName("")).toBe(false);
  });
});

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}
