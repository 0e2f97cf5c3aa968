import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkpointRef, decodeScopeId, encodeScopeId, slugFromThreadId, suffixedSlug, worktreeSlug } from "./refNames.js";

/** Ask the real git whether a branch name is valid. */
function validBranch(name: string): boolean {
  try {
    execFileSync("git", ["check-ref-format", "--branch", name], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function validRef(name: string): boolean {
  try {
    execFileSync("git", ["check-ref-format", name], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("worktreeSlug", () => {
  it("reads the title, lower case, with a short stable handle of the id; the id's slug without a usable title", () => {
    const slug = worktreeSlug("Fix the login page!", "thread:abc");
    expect(slug).toMatch(/^fix-the-login-page-[0-9a-f]{8}$/);
    expect(worktreeSlug("Fix the login page!", "thread:abc")).toBe(slug);
    expect(worktreeSlug("Fix the login page!", "thread:abd")).not.toBe(slug);
    expect(worktreeSlug("A".repeat(100), "thread:abc")).toMatch(/^a{40}-[0-9a-f]{8}$/);
    expect(worktreeSlug("@{}~^", "thread:1f2e")).toBe("thread-1f2e");
    expect(worktreeSlug(undefined, "thread:1f2e")).toBe("thread-1f2e");
    expect(validBranch(`loom/${worktreeSlug("..weird .lock name..", "thread:x")}`)).toBe(true);
  });
});

describe("slugFromThreadId", () => {
  it("keeps readable ids readable", () => {
    expect(slugFromThreadId("thread:1f2e-aa")).toBe("thread-1f2e-aa");
    expect(slugFromThreadId("..a//b..lock")).toBe("a-b-lock");
    expect(slugFromThreadId("@{}~^:?*[\\")).toBe("thread");
    expect(slugFromThreadId("Café")).toBe("Cafe");
    expect(suffixedSlug("x", 1)).toBe("x");
    expect(suffixedSlug("x", 3)).toBe("x-3");
  });

  it("always yields a branch name git accepts, with or without a suffix", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), fc.integer({ min: 1, max: 99 }), (threadId, attempt) => {
        const branch = `loom/${suffixedSlug(slugFromThreadId(threadId), attempt)}`;
        expect(validBranch(branch), branch).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

describe("checkpoint refs", () => {
  it("encodes scope ids reversibly into valid refs", () => {
    expect(checkpointRef("checkpointScope:ab.c", 7)).toBe("refs/loom/checkpoints/checkpointScope%3Aab%2Ec/7");
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1, maxLength: 60 }), fc.nat(), (scopeId, ordinal) => {
        expect(decodeScopeId(encodeScopeId(scopeId))).toBe(scopeId);
        expect(validRef(checkpointRef(scopeId, ordinal))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it("rejects an empty scope and a negative or fractional ordinal", () => {
    expect(() => checkpointRef("", 0)).toThrow(/empty/);
    expect(() => checkpointRef("s", -1)).toThrow(/non-negative integer/);
    expect(() => checkpointRef("s", 1.5)).toThrow(/non-negative integer/);
  });
});
