import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { execute } from "../context.js";

/**
 * Usage limit windows shared by every node on one log (docs/limits.md,
 * "Unavailable until the reset"): the registry records each window this
 * node's sessions meet with `provider-instance.limit-window.record` (its id
 * derived from the instance and the reset, so two sessions meeting one
 * limit record it once), and reads the windows any node recorded from the
 * engine's state, which follows the log.
 */
export function shareLimitWindows(ctx: Pick<AppContext, "orchestrator" | "registry">, log: (line: string) => void): void {
  ctx.registry.shareLimitWindows({
    record: (window) => {
      const command = { type: "provider-instance.limit-window.record", commandId: joinId("limit-window", window.providerInstanceId, window.resetAt), data: window } as const;
      execute(ctx, command).catch((error: unknown) => log(`loom: recording the usage limit window of ${window.providerInstanceId} failed: ${error instanceof Error ? error.message : String(error)}`));
    },
    recorded: (instanceId) => ctx.orchestrator.state.limitWindows.get(instanceId) ?? null,
  });
}
