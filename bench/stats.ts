/** Small helpers shared by the benchmarks: timing and table printing. */
export function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export function now(): bigint {
  return process.hrtime.bigint();
}

export function rate(count: number, elapsedSeconds: number): number {
  return count / elapsedSeconds;
}

export function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2);
}

export function printTable(title: string, rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  console.log(`\n${title}`);
  rows.forEach((row, i) => {
    console.log(`| ${row.map((cell, col) => cell.padEnd(widths[col]!)).join(" | ")} |`);
    if (i === 0) console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  });
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}
