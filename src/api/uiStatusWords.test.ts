import { describe, expect, it } from "vitest";
import { STATUS_WORDS, statusWords } from "../../ui/src/statusWords.js";

/** The one table the web UI's cards read status words through (ui/src/statusWords.ts). */
describe("status words in the web UI", () => {
  it("says approval decisions and item states in people's words", () => {
    expect([statusWords("accept"), statusWords("accept_for_session"), statusWords("decline"), statusWords("declined")]).toEqual([
      "approved",
      "approved for the session",
      "declined",
      "declined",
    ]);
    expect([statusWords("in_progress"), statusWords("completed"), statusWords("pending"), statusWords("waiting_on_user_input")]).toEqual([
      "running",
      "done",
      "waiting for you",
      "needs an answer",
    ]);
  });

  it("shows no wire spelling: no underscores, and a word it does not know yet reads with spaces", () => {
    expect(Object.values(STATUS_WORDS).filter((words) => words.includes("_"))).toEqual([]);
    expect(statusWords("some_new_state")).toBe("some new state");
    expect(statusWords("toString")).toBe("toString");
  });
});
