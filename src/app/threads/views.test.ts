import { describe, expect, it } from "vitest";
import { titleFromText } from "./views.js";

describe("titleFromText", () => {
  it("takes the first non-blank line, bounded", () => {
    expect(titleFromText("\n  Fix the login bug\nmore detail")).toBe("Fix the login bug");
    expect(titleFromText("x".repeat(80))).toBe(`${"x".repeat(57)}...`);
    expect(titleFromText("   ")).toBeNull();
  });

  it("titles a script by its first say, never by its raw JSON", () => {
    expect(titleFromText(JSON.stringify({ script: [{ sleep: 10 }, { approve: { kind: "command" } }, { say: "Summarize the logs\nplease" }, { say: "later" }] }))).toBe("Summarize the logs");
    expect(titleFromText(JSON.stringify({ script: [{ sleep: 120_000 }] }))).toBeNull();
    expect(titleFromText('{"not json')).toBe('{"not json');
  });
});
