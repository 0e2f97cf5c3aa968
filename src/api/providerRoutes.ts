import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../app/app.js";
import { AcpPrepareInput, AcpSearchInput } from "../app/providers/acpCatalog.js";
import { parsedInput } from "./parsedInput.js";
import { HttpError, readJsonBody, sendJson } from "../http/http.js";

/**
 * The ACP registry catalog over HTTP (docs/providers/acp.md, docs/cli.md),
 * behind the owner bearer like every /api/ route; the same app functions as
 * `loom providers`:
 *   GET  /api/providers/registry[?query=WORDS] → { registry, agents: CatalogEntry[] }
 *   POST /api/providers/prepare                 → { installed, instanceId, config, readiness, active }
 *        body { "agentId": "gemini", "instanceId"?: "gem" }
 *   GET  /api/providers                         → { config, instances, prepared }
 * The registry is the server's (LOOM_ACP_REGISTRY, else the official one).
 * Returns false for any other path.
 */
export async function providerRoute(app: App, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const path = url.pathname;
  if (path !== "/api/providers" && !path.startsWith("/api/providers/")) return false;
  if (path === "/api/providers") {
    if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    sendJson(res, 200, app.listProviderSetup());
    return true;
  }
  if (path === "/api/providers/registry") {
    if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    const query = url.searchParams.get("query");
    sendJson(res, 200, await app.searchAcpAgents(parsedInput(AcpSearchInput, query === null ? {} : { query })));
    return true;
  }
  if (path === "/api/providers/prepare") {
    if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
    const input = parsedInput(AcpPrepareInput, await readJsonBody(req), '; expected { "agentId": "<registry agent id>", "instanceId"?: "<instance id>" }');
    sendJson(res, 200, await app.prepareAcpAgent(input));
    return true;
  }
  return false;
}

