import type { ReportedUsage } from "../../contracts/commands/runtimeCommands.js";
import type { ModelPrice } from "../../contracts/entities/budgets.js";

/** The key of a price list that prices every model it does not name. */
export const ANY_MODEL = "*";

/** The price of `model` in an instance's price list: its own, else the list's `*`; null when the list prices neither. */
export function priceOf(prices: Readonly<Record<string, ModelPrice>> | undefined, model: string | null): ModelPrice | null {
  if (prices === undefined) return null;
  return (model === null ? undefined : prices[model]) ?? prices[ANY_MODEL] ?? null;
}

/**
 * A turn's cost in US dollars from its reported tokens: uncached input at the
 * input price, cache reads at the cached price (the input price when the list
 * gives none), output at the output price. Input tokens include the cache
 * reads (docs/providers/driver-kit.md, "usage").
 */
export function costOf(usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cachedInputTokens?: number | null }, price: ModelPrice): number {
  const input = Math.max(0, usage.inputTokens);
  const cached = Math.min(input, Math.max(0, usage.cachedInputTokens ?? 0));
  const dollars = (input - cached) * price.inputPerMTok + cached * (price.cachedInputPerMTok ?? price.inputPerMTok) + Math.max(0, usage.outputTokens) * price.outputPerMTok;
  return dollars / 1_000_000;
}

/** The usage with its cost: the provider's own when it reported one, else computed from `price`, else none. */
export function pricedUsage(usage: ReportedUsage, price: ModelPrice | null): ReportedUsage {
  if (usage.costUsd !== undefined || price === null) return usage;
  return { ...usage, costUsd: costOf(usage, price) };
}
