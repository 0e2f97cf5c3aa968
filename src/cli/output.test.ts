import { describe, expect, it } from "vitest";
import type { TurnItem } from "../contracts/turnItems.js";
import { messageAuthor } from "./output.js";
import { itemLine } from "./watchOutput.js";

describe("message authors", () => {
  it("names who wrote a message: the person, an agent, or Loom itself", () => {
    expect(messageAuthor("user")).toBe("user");
    expect(messageAuthor("agent")).toBe("agent");
    expect(messageAuthor("system")).toBe("system");
    expect(messageAuthor(undefined)).toBe("user");
  });

  it("watch lines name a scheduled fire as Loom's, not the person's", () => {
    const item = { type: "user_message", text: "nightly check", createdBy: "system", creationSource: "scheduler" } as unknown as TurnItem;
    expect(itemLine(item)).toBe("system: nightly check");
  });
});
