import type { ProviderFacts } from "../core/decision.js";
import type { ProviderDriver } from "../providers/adapter.js";
import { createAcpDriver, createGrokDriver } from "../providers/acp/driver.js";
import { codexDriver } from "../providers/codex/driver.js";
import { claudeDriver } from "../providers/claude/driver.js";
import { cursorDriver } from "../providers/cursor/driver.js";
import { opencodeDriver } from "../providers/opencode/driver.js";
import { createPiDriver } from "../providers/pi/driver.js";
import { scriptedDriver } from "../providers/scripted/driver.js";
import type { ProviderRegistry } from "../providers/registry.js";

/** Every driver this build ships, by name. `stateDir` holds prepared ACP registry agents and the pi driver's extension cache. */
export function builtInDrivers(context: { readonly stateDir?: string; readonly log?: (line: string) => void } = {}): Map<string, ProviderDriver> {
  const acp = createAcpDriver({ stateDir: context.stateDir ?? null, log: context.log });
  const grok = createGrokDriver({ stateDir: context.stateDir ?? null, log: context.log });
  const pi = createPiDriver({ stateDir: context.stateDir ?? null });
  return new Map<string, ProviderDriver>([
    [scriptedDriver.driver, scriptedDriver],
    [claudeDriver.driver, claudeDriver],
    [codexDriver.driver, codexDriver],
    [acp.driver, acp],
    [grok.driver, grok],
    [opencodeDriver.driver, opencodeDriver],
    [pi.driver, pi],
    [cursorDriver.driver, cursorDriver],
  ]);
}

/**
 * What the decider may know about a provider instance: its driver and
 * capability record, for an enabled instance with an adapter. Installation and
 * authentication are checked by the tools before they dispatch.
 */
export function providerFacts(registry: ProviderRegistry): (providerInstanceId: string) => ProviderFacts | null {
  return (providerInstanceId) => {
    const instance = registry.instance(providerInstanceId);
    const driver = registry.driverFor(providerInstanceId);
    if (instance === null || driver === null || !instance.enabled) return null;
    return { driver: driver.driver, capabilities: driver.capabilities(instance) };
  };
}
