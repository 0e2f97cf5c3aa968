import type { z } from "zod";

/**
 * A variant whose tag this build does not know (spec 004 §1.2). Older readers
 * keep it instead of failing, so a newer writer never breaks them.
 */
export interface UnknownVariant {
  readonly tag: "unknown";
  readonly rawTag: string;
  readonly raw: unknown;
}

export type ForwardCompatible<T> = T | UnknownVariant;

export class DecodeError extends Error {
  readonly code = "decode_error";
  constructor(message: string) {
    super(message);
    this.name = "DecodeError";
  }
}

/**
 * Decode a tagged union: a known tag must match its schema (a mismatch is a
 * DecodeError); an unknown tag becomes an UnknownVariant.
 */
export function decodeForwardCompatible<T>(
  discriminator: string,
  schemas: ReadonlyMap<string, z.ZodType<T>>,
  raw: unknown,
): ForwardCompatible<T> {
  if (typeof raw !== "object" || raw === null) {
    throw new DecodeError(`expected an object with a "${discriminator}" tag`);
  }
  const rawTag = (raw as Record<string, unknown>)[discriminator];
  if (typeof rawTag !== "string") {
    throw new DecodeError(`missing string tag "${discriminator}"`);
  }
  const schema = schemas.get(rawTag);
  if (schema === undefined) {
    return { tag: "unknown", rawTag, raw };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new DecodeError(`invalid ${rawTag}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return parsed.data;
}
