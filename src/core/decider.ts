import type { Command } from "../contracts/commands.js";
import type { DecideContext, Decision } from "./decision.js";
import { evolve, initialState, type OrchestrationState } from "./state.js";
import { decideThreadArchive, decideThreadCreate } from "./thread/lifecycle.js";

/** Decide one command against the current state. Pure: no I/O, no clock, no randomness but ctx's. */
export function decide(state: OrchestrationState, command: Command, ctx: DecideContext): Decision {
  switch (command.type) {
    case "thread.create":
      return decideThreadCreate(state, command, ctx);
    case "thread.archive":
      return decideThreadArchive(state, command, ctx);
    default: {
      const exhaustive: never = command;
      return exhaustive;
    }
  }
}

/** The decider as a plain value (STYLE.md rule 2). */
export const orchestrationDecider = { decide, evolve, initialState } as const;
