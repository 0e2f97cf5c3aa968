import { parseArgs } from "node:util";
import type { InboxRespondResult, InboxResult } from "../app/requests/inbox.js";
import { COMMON, type Output, positionals, withServer } from "./args.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";

/**
 * `loom requests`: the owner's inbox of pending approvals and questions across
 * every thread, over the owner HTTP routes (GET /api/requests, POST
 * /api/requests/:id/respond; docs/cli.md).
 */
export const REQUESTS_USAGE = `  loom requests list [--json]
  loom requests respond ID (--approve | --approve-for-session | --decline | --answer TEXT | --dismiss) [--json]`;

export const REQUESTS_HELP = `Usage:
${REQUESTS_USAGE}

  list     every pending approval and question, oldest first: request id,
           thread (and its parent), kind, title and detail.
  respond  answer one: --approve, --approve-for-session or --decline an
           approval; --answer TEXT or --dismiss a question. ID may be a unique
           prefix of the request id ("runtime-request:" may be left out).

Both take --state-dir DIR and --json. Exit codes: 0 done; 1 the server refused
(stderr: "code: message", e.g. a request that is no longer pending); 2 usage
error; 3 no server is running for the state dir.
`;

function formatInbox(inbox: InboxResult): string {
  if (inbox.requests.length === 0) return "no pending requests\n";
  const blocks = inbox.requests.map((r) => {
    const thread = `${r.threadId} "${r.threadTitle}"${r.parentThreadId === null ? "" : ` (child of ${r.parentThreadId})`}`;
    const detail = r.detail === "" ? [] : r.detail.split("\n").map((line) => `    ${line}`);
    const how = r.approval ? "--approve | --decline" : r.questions.length > 1 ? "--answer is for one question; use the HTTP API's answers" : "--answer TEXT | --dismiss";
    return [`${r.requestId}  ${r.approval ? "approval" : "question"} (${r.kind})${r.blocking ? "" : " non-blocking"}`, `  thread: ${thread}`, `  ${r.title}`, ...detail, `  answer: loom requests respond ${r.requestId} ${how}`].join("\n");
  });
  return `${blocks.join("\n\n")}\n`;
}

export async function runRequests(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError("loom requests needs a command: list or respond (see loom requests --help)");
  if (sub === "--help" || sub === "-h" || sub === "help") {
    out(REQUESTS_HELP);
    return 0;
  }
  const { values, positionals: args } = parseArgs({
    args: [...rest],
    options: {
      ...COMMON,
      approve: { type: "boolean" },
      "approve-for-session": { type: "boolean" },
      decline: { type: "boolean" },
      answer: { type: "string" },
      dismiss: { type: "boolean" },
    },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(REQUESTS_HELP);
    return 0;
  }
  switch (sub) {
    case "list": {
      positionals("requests", sub, args, []);
      return withServer(values["state-dir"], async (caller) => {
        const inbox = await caller.api.request<InboxResult>("GET", "/api/requests");
        out(values.json === true ? formatJson(inbox) : formatInbox(inbox));
      });
    }
    case "respond": {
      const [ref] = positionals("requests", sub, args, ["ID"]);
      const chosen = [
        values.approve === true ? { decision: "accept" } : null,
        values["approve-for-session"] === true ? { decision: "accept_for_session" } : null,
        values.decline === true ? { decision: "decline" } : null,
        values.answer === undefined ? null : { answer: values.answer },
        values.dismiss === true ? { dismiss: true } : null,
      ].filter((x) => x !== null);
      if (chosen.length !== 1) throw new UsageError("loom requests respond takes exactly one of --approve, --approve-for-session, --decline, --answer TEXT or --dismiss");
      return withServer(values["state-dir"], async (caller) => {
        const result = await caller.api.request<InboxRespondResult>("POST", `/api/requests/${encodeURIComponent(ref!)}/respond`, chosen[0]);
        const what = "decision" in chosen[0]! ? `${String(chosen[0].decision)}` : "answer" in chosen[0]! ? "answered" : "dismissed";
        out(values.json === true ? formatJson(result) : `${result.requestId} (${result.kind}) in ${result.threadId}: ${what}\n`);
      });
    }
    default:
      throw new UsageError(`unknown requests command "${sub}" (see loom requests --help)`);
  }
}
