import type { RuntimeMode } from "./modes.js";

/**
 * What a provider can do (DESIGN.md invariant 10). Policies — send-mode
 * selection, mode narrowing, delegation targets — read this record and never
 * the driver's name.
 */
export const McpTransport = {
  http: "http",
  none: "none",
} as const;
export type McpTransport = (typeof McpTransport)[keyof typeof McpTransport];

export interface ProviderCapabilities {
  /** Input can be added to a running turn (`steerTurn`). */
  readonly steering: boolean;
  /** A running turn can be stopped (`interruptTurn`). */
  readonly interrupt: boolean;
  /** Steering may be emulated by interrupting and re-sending. */
  readonly restart: boolean;
  /** The provider can fork its own session natively. */
  readonly fork: boolean;
  /** A released session can be resumed from the provider's own record. */
  readonly resume: boolean;
  /** The runtime modes the provider honours, narrowest first. */
  readonly runtimeModes: readonly RuntimeMode[];
  /** Models the driver advertises; an instance's configured list overrides it. */
  readonly models: readonly string[];
  /** How the agent reaches Loom's MCP endpoint; "none" cannot orchestrate. */
  readonly mcpTransport: McpTransport;
  /**
   * Models the driver still accepts but no longer offers by default: capability
   * answers show them only to a `search` (spec 000, orchestrator_capabilities).
   */
  readonly legacyModels?: readonly string[];
  /**
   * The driver's current model list is short and curated, so capability answers
   * list all of it; otherwise they list the first 8 in the user's order.
   */
  readonly curatedModels?: boolean;
  /**
   * Environment variables given with a turn (owner-supplied secrets, request_secret)
   * reach the commands the agent runs in that turn. Absent means no.
   */
  readonly turnEnvironment?: boolean;
}

