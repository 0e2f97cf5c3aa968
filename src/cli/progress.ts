/**
 * What a waiting command shows on stderr while it waits: on a terminal a
 * spinner line with the elapsed time and the run status, rewritten in place;
 * otherwise one plain line every few seconds. Never on stdout, so --json
 * output stays parseable.
 */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export interface WaitProgressOptions {
  readonly stream: ProgressStream;
  /** Status text until the server reports one, e.g. "run run:1 is starting". */
  readonly initial: string;
  /** Non-terminal streams: time between lines. */
  readonly lineIntervalMs?: number;
  readonly clock?: () => number;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_MS = 100;
export const DEFAULT_PROGRESS_LINE_MS = 3_000;

export class WaitProgress {
  private status: string;
  private readonly started: number;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  private frame = 0;
  private readonly tty: boolean;

  constructor(private readonly options: WaitProgressOptions) {
    this.clock = options.clock ?? Date.now;
    this.started = this.clock();
    this.status = options.initial;
    this.tty = options.stream.isTTY === true;
  }

  start(): this {
    const every = this.tty ? SPINNER_MS : (this.options.lineIntervalMs ?? DEFAULT_PROGRESS_LINE_MS);
    this.timer = setInterval(() => this.render(), every);
    this.timer.unref();
    if (this.tty) {
      // Ctrl-C mid-wait: leave a clean line behind, then end as SIGINT would.
      process.once("SIGINT", this.onInterrupt);
      this.render();
    }
    return this;
  }

  private readonly onInterrupt = (): void => {
    this.stop();
    process.exit(130);
  };

  /** A progress message from the server ("run X is running (5 s)") or a known status. */
  update(status: string): void {
    this.status = status.replace(/\s*\(\d+ s\)$/, "");
  }

  /** Stop and erase the spinner line. Safe to call twice. */
  stop(): void {
    if (this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
    if (this.tty) {
      process.off("SIGINT", this.onInterrupt);
      this.options.stream.write("\r\x1b[2K");
    }
  }

  private render(): void {
    const elapsed = formatElapsed(this.clock() - this.started);
    if (!this.tty) {
      this.options.stream.write(`loom: waiting: ${this.status} (${elapsed} elapsed)\n`);
      return;
    }
    this.frame = (this.frame + 1) % FRAMES.length;
    const line = `${FRAMES[this.frame]} ${elapsed}  ${this.status}`;
    const width = Math.max(20, (this.options.stream.columns || 80) - 1);
    this.options.stream.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
  }
}

/** 4.2 s, 1 m 05 s */
export function formatElapsed(ms: number): string {
  const totalSeconds = Math.max(0, ms) / 1000;
  if (totalSeconds < 60) return `${totalSeconds.toFixed(1)} s`;
  const minutes = Math.floor(totalSeconds / 60);
  const seconds = Math.floor(totalSeconds % 60);
  return `${minutes} m ${String(seconds).padStart(2, "0")} s`;
}
