/**
 * The ultracode library (docs/workflows.md): bestOfN, verify and loopUntil,
 * written in the script language on top of agent() and parallel(), so every
 * call they make is a journaled, replayable agent() step like any other.
 * Evaluated in the sandbox before every script. The judge, verifier and fix
 * prompts are the documented defaults; each call may override them.
 */

export const JUDGE_PROMPT =
  "You are a judge on a panel. Several attempts at the same task follow. Judge each on correctness first, then completeness, then clarity. Pick the single best attempt by its index and score every attempt from 0 to 10.";
export const VERIFIER_PROMPT =
  "You are an adversarial verifier. Try to break the work below: look for defects, wrong claims, missing cases and untested behaviour. Report every real problem as a finding with its evidence; report no findings only if you could not break it.";
export const FIX_PROMPT = "A verifier found problems in your previous work. Fix every finding and report the whole corrected result again.";

export const WORKFLOW_LIBRARY = `
"use strict";
const __loomText = (value) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));
const __loomTarget = (target) => (target === undefined || target === null ? {} : { target: typeof target === "string" ? { providerInstanceId: target } : target });
const __loomCheck = (ok, message) => { if (!ok) throw new TypeError(message); };
globalThis.JUDGE_PROMPT = ${JSON.stringify(JUDGE_PROMPT)};
globalThis.VERIFIER_PROMPT = ${JSON.stringify(VERIFIER_PROMPT)};
globalThis.FIX_PROMPT = ${JSON.stringify(FIX_PROMPT)};
const __loomVerdictSchema = (n) => ({
  type: "object",
  properties: {
    winner: { type: "integer", minimum: 0, maximum: n - 1 },
    scores: { type: "array", items: { type: "number" }, minItems: n, maxItems: n },
    rationale: { type: "string" },
  },
  required: ["winner", "scores", "rationale"],
});
const __loomFindingsSchema = {
  type: "object",
  properties: {
    findings: {
      type: "array",
      items: {
        type: "object",
        properties: { severity: { enum: ["low", "medium", "high"] }, description: { type: "string" }, evidence: { type: "string" } },
        required: ["description"],
      },
    },
  },
  required: ["findings"],
};

/** n attempts (round-robin over targets), then a judge panel voting by majority; a tie goes to the higher total score, then the lower index. */
globalThis.bestOfN = async (options) => {
  __loomCheck(typeof options === "object" && options !== null, "bestOfN({ task, n, targets, judges }): options must be an object");
  const { task, n = 2, targets = [], judges = [{}], schema, label = "attempt" } = options;
  __loomCheck(typeof task === "string" && task.length > 0, "bestOfN: task must be a non-empty string");
  __loomCheck(Number.isInteger(n) && n >= 1 && n <= 32, "bestOfN: n must be an integer from 1 to 32");
  __loomCheck(Array.isArray(targets) && Array.isArray(judges) && judges.length >= 1, "bestOfN: targets and judges must be arrays, with at least one judge");
  const attempts = await parallel(Array.from({ length: n }, (_, index) => () =>
    agent(task, { label: label + " " + (index + 1), phase: "Attempts", ...(targets.length > 0 ? __loomTarget(targets[index % targets.length]) : {}), ...(schema === undefined ? {} : { schema }) })));
  const listing = attempts.map((attempt, index) => "Attempt " + index + ":\\n" + __loomText(attempt)).join("\\n\\n");
  const context = "Task:\\n" + task + "\\n\\n" + listing + "\\n\\nAnswer with winner (an attempt index from 0 to " + (n - 1) + "), scores (one number from 0 to 10 per attempt, in order) and rationale.";
  const votes = await parallel(judges.map((judge, index) => () =>
    agent((judge.prompt ?? JUDGE_PROMPT) + "\\n\\n" + context, { label: "judge " + (index + 1), phase: "Judging", schema: __loomVerdictSchema(n), ...__loomTarget(judge.target) })));
  const counts = Array.from({ length: n }, () => 0);
  const totals = Array.from({ length: n }, () => 0);
  for (const vote of votes) {
    counts[vote.winner] += 1;
    vote.scores.forEach((score, index) => { totals[index] += score; });
  }
  let winner = 0;
  for (let index = 1; index < n; index += 1) {
    if (counts[index] > counts[winner] || (counts[index] === counts[winner] && totals[index] > totals[winner])) winner = index;
  }
  const scores = totals.map((total) => total / votes.length);
  const rationale = votes.filter((vote) => vote.winner === winner).map((vote) => vote.rationale).join("\\n");
  const split = new Set(votes.map((vote) => vote.winner)).size > 1;
  return { winner, attempt: attempts[winner], attempts, verdict: { winner, scores, rationale, votes: votes.map((vote) => vote.winner), split } };
};

/** Work, then a verifier told to break it returns findings; the worker fixes them; until no findings or rounds run out. */
globalThis.verify = async (options) => {
  __loomCheck(typeof options === "object" && options !== null, "verify({ work, verifier, rounds }): options must be an object");
  const { work, verifier = {}, rounds = 3 } = options;
  const job = typeof work === "string" ? { task: work } : work;
  __loomCheck(typeof job === "object" && job !== null && typeof job.task === "string" && job.task.length > 0, "verify: work must be a task string or { task, target?, schema?, fixPrompt? }");
  __loomCheck(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20, "verify: rounds must be an integer from 1 to 20");
  const schema = job.schema === undefined ? {} : { schema: job.schema };
  let result = await agent(job.task, { label: "work", phase: "Work", ...__loomTarget(job.target), ...schema });
  const history = [];
  for (let round = 1; round <= rounds; round += 1) {
    const header = typeof verifier.prompt === "function" ? verifier.prompt(round, result) : (verifier.prompt ?? VERIFIER_PROMPT);
    const report = await agent(header + "\\n\\nTask:\\n" + job.task + "\\n\\nWork:\\n" + __loomText(result), {
      label: "verify " + round, phase: "Verify", schema: __loomFindingsSchema, ...__loomTarget(verifier.target),
    });
    history.push({ round, findings: report.findings });
    if (report.findings.length === 0) return { result, clean: true, rounds: history };
    if (round === rounds) break;
    const listing = report.findings.map((finding, index) => (index + 1) + ". " + (finding.severity ? "[" + finding.severity + "] " : "") + finding.description + (finding.evidence ? " (" + finding.evidence + ")" : "")).join("\\n");
    result = await agent((job.fixPrompt ?? job.task) + "\\n\\n" + FIX_PROMPT + "\\n\\nFindings:\\n" + listing + "\\n\\nPrevious work:\\n" + __loomText(result), {
      label: "fix " + round, phase: "Fix", ...__loomTarget(job.target), ...schema,
    });
  }
  return { result, clean: false, rounds: history };
};

/**
 * Repeat the task until a check holds (a predicate, a truthy field of the
 * result, or a shell command in the workspace exiting 0) or maxIterations run out.
 */
globalThis.loopUntil = async (options) => {
  __loomCheck(typeof options === "object" && options !== null, "loopUntil({ task, until, maxIterations }): options must be an object");
  const { task, body, until, maxIterations = 5, target, schema } = options;
  const step = task ?? body;
  __loomCheck(typeof step === "string" || typeof step === "function", "loopUntil: task must be a prompt or a function (iteration, previous) => prompt");
  const byCommand = typeof until === "object" && until !== null && typeof until.command === "string" && until.command.length > 0;
  __loomCheck(typeof until === "function" || byCommand || (typeof until === "object" && until !== null && typeof until.check === "string"), "loopUntil: until must be a function (result, iteration) => boolean, { check: field } or { command: shell command }");
  __loomCheck(Number.isInteger(maxIterations) && maxIterations >= 1 && maxIterations <= 100, "loopUntil: maxIterations must be an integer from 1 to 100");
  let last;
  let command = null;
  const history = [];
  for (let iteration = 1; iteration <= maxIterations; iteration += 1) {
    const failing = command === null || command.exitCode === 0 ? "" : "\\n\\nThe check command " + JSON.stringify(until.command) + " exited " + command.exitCode + ":\\n" + command.output;
    const prompt = typeof step === "function" ? step(iteration, last, command) : iteration === 1 ? step : step + "\\n\\nIteration " + iteration + ". The previous result did not meet the stopping condition:\\n" + __loomText(last) + failing;
    last = await agent(prompt, { label: "iteration " + iteration, phase: "Loop", ...__loomTarget(target), ...(schema === undefined ? {} : { schema }) });
    history.push(last);
    let done;
    if (byCommand) {
      command = await __loomAgent(until.command, JSON.stringify({ __command: true, label: "check " + iteration, phase: "Loop" }));
      done = command.exitCode === 0;
    } else {
      done = typeof until === "function" ? await until(last, iteration) : Boolean(last !== null && typeof last === "object" && last[until.check]);
    }
    if (done) return { result: last, iterations: iteration, done: true, history, ...(byCommand ? { command } : {}) };
  }
  return { result: last, iterations: maxIterations, done: false, history, ...(byCommand ? { command } : {}) };
};
`;

/** The built-in named workflows: each runs one library function with the workflow's args. */
export const BUILT_IN_WORKFLOWS: Readonly<Record<string, string>> = {
  bestOfN: `export const meta = { name: "bestOfN", description: "n attempts, then a judge panel voting by majority", phases: [{ title: "Attempts" }, { title: "Judging" }] };\nreturn await bestOfN(args);`,
  verify: `export const meta = { name: "verify", description: "work, adversarial verification with findings, fixes", phases: [{ title: "Work" }, { title: "Verify" }, { title: "Fix" }] };\nreturn await verify(args);`,
  loopUntil: `export const meta = { name: "loopUntil", description: "repeat until a check holds", phases: [{ title: "Loop" }] };\nreturn await loopUntil(args);`,
};
