import type { ApprovalRequestItem, UserInputRequestItem } from "../events.js";
import type { AcpOptionDefaults } from "./options.js";

/**
 * A flavor of the shared ACP adapter (spec 000, "Grok ACP V2"): the generic
 * `acp` driver has no extensions; a flavor such as `grok` adds the agent's
 * own extension requests, each of which becomes a Loom request item answered
 * through respondToRequest.
 */

export interface AcpExtensionRequest {
  /** The JSON-RPC methods this extension answers (ACP extension methods start with "_"). */
  readonly methods: readonly string[];
  /** The Loom item the request becomes; null refuses it as invalid params. */
  item(method: string, params: unknown, requestId: string): UserInputRequestItem | ApprovalRequestItem | null;
  /** The agent's answer for Loom's response. Throws ProviderError protocol_error for a response of the wrong shape. */
  result(method: string, params: unknown, response: unknown): unknown;
  /** The answer when no one can answer any more (interrupt, stop, a request outside a turn). */
  cancelled(method: string): unknown;
}

export interface AcpFlavor {
  /** The driver name config entries use. */
  readonly driver: string;
  /** For messages: "ACP agent", "Grok". */
  readonly label: string;
  readonly defaults: AcpOptionDefaults;
  readonly extensions: readonly AcpExtensionRequest[];
  /** Whether the flavor uses session/fork when the agent advertises it (Grok's does not: spec 000). */
  readonly nativeFork: boolean;
}

/** The generic flavor: standard ACP only. Registry agents get no provider-specific extensions. */
export const GENERIC_ACP_FLAVOR: AcpFlavor = { driver: "acp", label: "ACP agent", defaults: {}, extensions: [], nativeFork: true };
