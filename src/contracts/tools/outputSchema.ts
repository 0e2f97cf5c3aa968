import { z } from "zod";

/** The longest output schema accepted, as JSON text. */
export const MAX_OUTPUT_SCHEMA_CHARS = 50_000;

/** A JSON Schema (draft-07) an agent's final answer must match (structured results of delegate_task, create_threads and t3_thread_launch; docs/delegation.md). */
export const OutputSchemaInput = z
  .record(z.string().max(200), z.unknown())
  .refine((schema) => JSON.stringify(schema).length <= MAX_OUTPUT_SCHEMA_CHARS, { message: `at most ${MAX_OUTPUT_SCHEMA_CHARS} characters of JSON` })
  .meta({ maxProperties: 100 })
  .describe("JSON Schema the agent's final answer must match: it is told to finish with one JSON value, which is validated (one repair turn on mismatch) and returned as structuredResult");

