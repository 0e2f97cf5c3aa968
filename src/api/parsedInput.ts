import type { z } from "zod";
import { AppError } from "../app/errors.js";
import { formatZodIssues } from "../contracts/zodIssues.js";

/** A route's input checked against an app function's schema; anything else is `invalid_request` naming each issue (and `hint`, what was expected). */
export function parsedInput<S extends z.ZodType>(schema: S, raw: unknown, hint = ""): z.output<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw new AppError("invalid_request", `invalid request: ${formatZodIssues(result.error)}${hint}`);
  return result.data;
}
