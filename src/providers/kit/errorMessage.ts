/** What drivers say of an error they caught: its message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The first line of an error's message (a CLI's probe failure may go on with its usage text). */
export function firstLineOf(error: unknown): string {
  return error instanceof Error ? (error.message.split("\n")[0] ?? error.message) : String(error);
}
