import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { currentPlatform } from "../providers/acp/registry.js";
import { SCRIPTED_AGENT_PATH } from "./acpAgentHarness.js";

/**
 * The scripted ACP agent as a registry "binary" release: a .tar.gz holding
 * bin/scripted-agent (a launcher for acpScriptedAgent.mjs), served from a
 * local HTTP server, and a registry document that points at it.
 */

/** The registry id of the archived agent. */
export const ARCHIVE_AGENT_ID = "scripted-acp";

export interface AgentArchiveServer {
  readonly baseUrl: string;
  /** The archive's URL path. */
  readonly path: string;
  readonly sha256: string;
  /** Writes a registry with one agent `scripted-acp` 2.0.0 whose binary is this archive; returns its path. */
  writeRegistry(file: string, options?: { readonly sha256?: string; readonly path?: string; readonly env?: Record<string, string> }): string;
  close(): Promise<void>;
}

export async function serveAgentArchive(): Promise<AgentArchiveServer> {
  const build = mkdtempSync(join(tmpdir(), "loom-acp-archive-"));
  mkdirSync(join(build, "bin"));
  writeFileSync(join(build, "bin", "scripted-agent"), `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_AGENT_PATH}" "$@"\n`, { mode: 0o755 });
  execFileSync("tar", ["-czf", join(build, "agent.tar.gz"), "-C", build, "bin"]);
  const archive = readFileSync(join(build, "agent.tar.gz"));
  rmSync(build, { recursive: true, force: true });
  const sha256 = createHash("sha256").update(archive).digest("hex");
  const path = "/releases/agent.tar.gz";
  const server = createServer((request, response) => {
    if (request.url === path) {
      response.writeHead(200, { "content-type": "application/gzip" });
      response.end(archive);
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    path,
    sha256,
    writeRegistry(file, options = {}) {
      const platform = currentPlatform();
      if (platform === null) throw new Error("this platform has no ACP registry key");
      const target = { archive: `${baseUrl}${options.path ?? path}`, sha256: options.sha256 ?? sha256, cmd: "./bin/scripted-agent", env: options.env ?? {} };
      writeFileSync(
        file,
        JSON.stringify({
          version: "1.0.0",
          agents: [{ id: ARCHIVE_AGENT_ID, name: "Scripted ACP agent", version: "2.0.0", description: "The test agent, as a binary release", distribution: { binary: { [platform]: target } } }],
        }),
      );
      return file;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
