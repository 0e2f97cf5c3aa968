import { describe, expect, it } from "vitest";
import { codexOutputSchema } from "./outputSchema.js";

/** Which output schemas Codex is given natively (strict-compatible ones) and which are left to Loom's check. */
describe("codexOutputSchema", () => {
  const closed = (properties: Record<string, unknown>) => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });

  it("passes a schema whose objects are closed and fully required, nested ones included", () => {
    const schema = closed({ verdict: closed({ winner: { type: "integer" } }), findings: { type: "array", items: closed({ text: { type: "string" } }) } });
    expect(codexOutputSchema(schema)).toBe(schema);
    expect(codexOutputSchema({ type: "string" })).toEqual({ type: "string" });
  });

  it("leaves out a schema with an optional property, open extra properties, or a loose nested object", () => {
    expect(codexOutputSchema({ type: "object", properties: { a: { type: "string" } }, required: [], additionalProperties: false })).toBeNull();
    expect(codexOutputSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a"] })).toBeNull();
    expect(codexOutputSchema(closed({ list: { type: "array", items: { type: "object", properties: { x: {} } } } }))).toBeNull();
    expect(codexOutputSchema({ anyOf: [closed({}), { type: "object" }] })).toBeNull();
    expect(codexOutputSchema(undefined)).toBeNull();
  });
});
