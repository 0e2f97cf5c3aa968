import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { ClientRequestClaim } from "../contracts/commands/commandSchema.js";
import type { ToolName } from "../contracts/tools/toolContracts.js";
import { joinId } from "../core/ids.js";
import type { AppContext } from "./context.js";
import { fail } from "./errors.js";

/**
 * clientRequestId reuse (spec 000, Policy And Idempotency). A key returns the
 * original work only for the same request: the tool's parsed input without
 * the key, as canonical JSON (RFC 8785), hashed with SHA-256. The request's
 * first command carries the claim, so the fingerprint is committed with the
 * first piece of work and survives restarts in the folded state.
 */
export interface RequestClaim extends ClientRequestClaim {
  readonly clientRequestId: string;
}

/** SHA-256 (hex) of the canonical JSON of `input` without its clientRequestId. */
export function requestFingerprint(input: { readonly clientRequestId?: string | undefined }): string {
  const { clientRequestId: _key, ...request } = input;
  return createHash("sha256")
    .update(canonicalize(request) ?? "null", "utf8")
    .digest("hex");
}

/**
 * The claim for a keyed call, or null without a clientRequestId. A key first
 * used for a different request is refused here, before anything is resolved
 * or written. `input` is the tool's parsed input; a tool leaves out only the
 * fields that choose how the call answers, not what work it does
 * (delegate_task's mode and timeoutMs).
 */
export function claimRequest<I extends { readonly clientRequestId?: string | undefined }>(ctx: AppContext, scope: string, tool: ToolName, input: I): RequestClaim | null {
  const clientRequestId = input.clientRequestId;
  if (clientRequestId === undefined) return null;
  const claim: RequestClaim = { key: joinId("client-request", scope, "tool", tool, "request", clientRequestId), tool, fingerprint: requestFingerprint(input), clientRequestId };
  checkClaim(ctx, claim);
  return claim;
}

/**
 * Call after the request's first command: when two calls raced with one key,
 * the first command of the loser was answered with the winner's receipt, and
 * the recorded fingerprint tells them apart. Nothing of the loser was written.
 */
export function checkClaim(ctx: AppContext, claim: RequestClaim | null): void {
  if (claim === null) return;
  const known = ctx.orchestrator.state.clientRequests.get(claim.key);
  if (known !== undefined && known.fingerprint !== claim.fingerprint) {
    fail(
      "invalid_request",
      `clientRequestId ${JSON.stringify(claim.clientRequestId)} was already used for a different ${claim.tool} request; a reused key returns the original work only for the same request. Use a new clientRequestId for new work.`,
      { clientRequestId: claim.clientRequestId },
    );
  }
}

/** The command's claim field: only on the request's first command. */
export function claimField(claim: RequestClaim | null): { clientRequest?: ClientRequestClaim } {
  return claim === null ? {} : { clientRequest: { key: claim.key, tool: claim.tool, fingerprint: claim.fingerprint } };
}
