import { describe, expect, it } from "vitest";
import { checkStructuredResult, extractJson, schemaProblem } from "./structuredResult.js";

const SCHEMA = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };

describe("structured results", () => {
  it("reads bare, fenced and embedded JSON", () => {
    expect(extractJson('{"ok": true}')).toEqual({ ok: true, value: { ok: true } });
    expect(extractJson('Done.\n```json\n{"ok": false}\n```\nbye')).toEqual({ ok: true, value: { ok: false } });
    expect(extractJson('The verdict is {"ok": true} as asked')).toEqual({ ok: true, value: { ok: true } });
    expect(extractJson("no json here")).toEqual({ ok: false });
  });

  it("validates against the schema with readable errors", () => {
    expect(checkStructuredResult(SCHEMA, '{"ok": true}')).toEqual({ ok: true, value: { ok: true } });
    expect(checkStructuredResult(SCHEMA, '{"ok": 1}')).toEqual({ ok: false, errors: ["/ok must be boolean"] });
    expect(checkStructuredResult(SCHEMA, "")).toEqual({ ok: false, errors: ["the final answer is empty; it must be one JSON value"] });
    expect(checkStructuredResult(SCHEMA, null).ok).toBe(false);
  });

  it("reports a schema that does not compile", () => {
    expect(schemaProblem(SCHEMA)).toBeNull();
    expect(schemaProblem({ type: "nonsense" })).toContain("schema is invalid");
  });
});
