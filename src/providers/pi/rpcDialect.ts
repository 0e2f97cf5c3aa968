import type { RpcDialect } from "../kit/jsonRpcProcess.js";

/**
 * Pi's RPC envelope (`pi --mode rpc`, docs/rpc.md of
 * @mariozechner/pi-coding-agent) for the kit's JsonRpcProcess, which does
 * the spawning, the LF-only line framing and the correlation. A command is
 * `{ type, id, ...fields }` and is answered by `{ type: "response", id,
 * command, success, data | error }`; an `extension_ui_request` (a dialog of
 * an extension, answered with an `extension_ui_response` record) is the
 * agent's request; every other record is an event.
 */
export const piRpcDialect: RpcDialect = {
  request: (seq, type, fields) => {
    const id = `loom-${seq}`;
    return { id, record: { ...(fields as Record<string, unknown>), type, id } };
  },
  classify: (message) => {
    if (message.type === "response" && typeof message.id === "string") {
      if (message.success === false) return { kind: "error", id: message.id, code: null, message: typeof message.error === "string" ? message.error : "no reason given" };
      return { kind: "result", id: message.id, result: message.data };
    }
    return message.type === "extension_ui_request" ? { kind: "request" } : { kind: "notification" };
  },
};
