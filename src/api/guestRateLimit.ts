/**
 * Failures per key (a remote address) in fixed windows: once a key has
 * `max` failures in its window, it is refused until the window passes.
 * Windows not seen for a window are dropped as they pass, so the table holds
 * only the addresses of the last window.
 */
export class FailureLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private swept = 0;

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly clock: () => number,
  ) {}

  /** True while the key has fewer than `max` failures in its current window. */
  allows(key: string): boolean {
    const window = this.current(key);
    return window === undefined || window.count < this.max;
  }

  /** Count one failure of the key. */
  fail(key: string): void {
    const window = this.current(key);
    if (window === undefined) this.windows.set(key, { start: this.clock(), count: 1 });
    else window.count += 1;
  }

  private current(key: string): { start: number; count: number } | undefined {
    const now = this.clock();
    if (now - this.swept >= this.windowMs) {
      for (const [k, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(k);
      this.swept = now;
    }
    const window = this.windows.get(key);
    return window !== undefined && now - window.start < this.windowMs ? window : undefined;
  }
}
