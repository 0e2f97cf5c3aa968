import { describe, expect, it } from "vitest";
import { oneAtATime } from "./mergeTurns.js";

describe("oneAtATime", () => {
  it("runs work of one key in turn, after a failure too, and work of other keys beside it", async () => {
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = oneAtATime("parent", async () => {
      log.push("first start");
      await gate;
      log.push("first end");
      throw new Error("the first check failed");
    });
    const second = oneAtATime("parent", () => {
      log.push("second start");
      return Promise.resolve("merged");
    });
    const other = oneAtATime("other parent", () => {
      log.push("other");
      return Promise.resolve("other merged");
    });
    await expect(other).resolves.toBe("other merged");
    release();
    await expect(first).rejects.toThrow("the first check failed");
    await expect(second).resolves.toBe("merged");
    expect(log).toEqual(["first start", "other", "first end", "second start"]);
  });
});
