import type { ProviderAvailability, ProviderRegistry } from "../providers/registry.js";

/** One line per provider instance: what `loom serve` prints on start and `loom doctor` checks. */
export function providerLine(p: ProviderAvailability): string {
  const head = `provider ${p.instance.id} (${p.driver})`;
  return p.available ? `${head}: available, models ${p.models.slice(0, 3).join(", ")}${p.models.length > 3 ? ", …" : ""}` : `${head}: unavailable: ${p.reason ?? "unknown reason"}`;
}

/**
 * Probe every instance once and log its line. Runs after the server listens,
 * so a slow probe never delays start; a failing probe is reported, not thrown.
 */
export async function reportProviders(registry: ProviderRegistry, log: (line: string) => void): Promise<void> {
  try {
    for (const p of await registry.list()) log(`loom: ${providerLine(p)}`);
  } catch (error) {
    log(`loom: provider probes failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
