/**
 * Codex constrains a turn's final message with `outputSchema` on turn/start,
 * sent to the model as a strict JSON-schema response format. Strict mode
 * refuses schemas whose objects leave properties optional or allow extra
 * ones, so only a schema that already reads as strict is passed natively;
 * any other is still checked (and repaired) by Loom after the turn.
 */
export function codexOutputSchema(schema: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> | null {
  return schema !== undefined && strictCompatible(schema) ? schema : null;
}

/** Every object in the schema closes its properties and requires them all. */
function strictCompatible(node: unknown): boolean {
  if (Array.isArray(node)) return node.every(strictCompatible);
  if (typeof node !== "object" || node === null) return true;
  const record = node as Record<string, unknown>;
  if (record.type === "object" || record.properties !== undefined) {
    if (record.additionalProperties !== false) return false;
    const properties = record.properties;
    const keys = typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
    const required = Array.isArray(record.required) ? record.required : [];
    if (!keys.every((key) => required.includes(key))) return false;
  }
  const children = ["properties", "$defs", "definitions"].flatMap((key): unknown[] => {
    const value = record[key];
    return typeof value === "object" && value !== null ? Object.values(value as Record<string, unknown>) : [];
  });
  const nested: unknown[] = ["items", "anyOf", "allOf", "oneOf"].map((key) => record[key]).filter((value) => value !== undefined);
  return [...children, ...nested].every(strictCompatible);
}
