/**
 * Poll a status another process owns (a spawned `loom serve`, an OS process)
 * until it holds, or fail after `timeoutMs` naming what was awaited and the
 * last value seen. For in-process state, wait on a committed sequence or an
 * event instead.
 */
export async function pollUntil<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
