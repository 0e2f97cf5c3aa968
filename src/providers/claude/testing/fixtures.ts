import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";

/** A recorded transcript from ../fixtures/ (see its README). */
export interface ClaudeFixture {
  readonly scenario: string;
  readonly runtimeMode: string;
  readonly cwd: string;
  readonly prompt: string;
  readonly permissionRequests: readonly { readonly toolName: string; readonly input: Record<string, unknown>; readonly options: Record<string, unknown> }[];
  readonly messages: readonly SDKMessage[];
}

/** The uuid the recorder gave the turn's user message, and a steer's. */
export const FIXTURE_TURN_UUID = "00000000-0000-4000-8000-000000000001";
export const FIXTURE_STEER_UUID = "00000000-0000-4000-8000-000000000002";

export function loadFixture(name: string): ClaudeFixture {
  const path = join(import.meta.dirname, "..", "fixtures", `${name}.json`);
  return JSON.parse(readFileSync(path, "utf8")) as ClaudeFixture;
}

export function resultOf(fixture: ClaudeFixture): SDKResultMessage {
  const result = fixture.messages.find((message): message is SDKResultMessage => message.type === "result");
  if (result === undefined) throw new Error(`fixture ${fixture.scenario} has no result message`);
  return result;
}

/** The Claude Code session id the recording ran under (every message carries it). */
export function fixtureSessionId(fixture: ClaudeFixture): string {
  const init = fixture.messages.find((message) => message.type === "system" && message.subtype === "init");
  if (init === undefined) throw new Error(`fixture ${fixture.scenario} has no init message`);
  return init.session_id;
}

export interface ReplayIds {
  /** The uuid the session gave the turn's user message. */
  readonly turnUuid: string;
  /** The uuid of a steer's user message, for a transcript that has one. */
  readonly steerUuid?: string;
  /** The session id Claude Code was asked to run under (`options.sessionId`). */
  readonly sessionId: string;
}

/**
 * A recorded transcript as the session's own Claude Code would have written
 * it: the recorded turn and steer uuids and session id replaced by the
 * session's. Nothing else changes.
 */
export function replayFixture(name: string, ids: ReplayIds): SDKMessage[] {
  const fixture = loadFixture(name);
  const replacements: [string, string][] = [
    [FIXTURE_TURN_UUID, ids.turnUuid],
    [fixtureSessionId(fixture), ids.sessionId],
    ...(ids.steerUuid === undefined ? [] : [[FIXTURE_STEER_UUID, ids.steerUuid] as [string, string]]),
  ];
  let text = JSON.stringify(fixture.messages);
  for (const [from, to] of replacements) text = text.replaceAll(from, to);
  return JSON.parse(text) as SDKMessage[];
}
