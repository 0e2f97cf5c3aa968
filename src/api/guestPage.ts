/**
 * The guest page (docs/guest-share.md): one small HTML page and its script,
 * apart from the owner's web UI bundle, so a guest's browser loads nothing of
 * the owner's UI. The page is the same for every link, valid or not; what it
 * shows comes from the share's own routes. Everything a guest or the agent
 * wrote is set as text (textContent), never as markup.
 */
import { GUEST_ATTACHMENT_LIMIT, GUEST_ATTACHMENT_TYPES } from "../contracts/entities/guestShares.js";

export const GUEST_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Loom: shared thread</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d1f23; background: #f7f7f5; }
main { max-width: 760px; margin: 0 auto; padding: 16px; }
h1 { font-size: 18px; margin: 8px 0; }
#status { color: #5b6070; font-size: 13px; }
#rows { list-style: none; padding: 0; }
#rows li { background: #fff; border: 1px solid #e2e2de; border-radius: 6px; padding: 8px 10px; margin: 6px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
#rows li[data-kind="user"] { border-left: 4px solid #3a6df0; }
#rows li[data-kind="assistant"] { border-left: 4px solid #2c9a5a; }
#rows li[data-kind="activity"], #rows li[data-kind="notice"] { color: #5b6070; font-size: 13px; }
#rows li[data-kind="error"] { border-left: 4px solid #c33; }
form { margin: 12px 0; display: flex; gap: 8px; flex-wrap: wrap; }
textarea { width: 100%; min-height: 70px; font: inherit; }
#notice { padding: 8px 10px; background: #fff4d6; border-radius: 6px; }
[hidden] { display: none !important; }
</style>
</head>
<body>
<main>
<p id="notice" role="status" hidden></p>
<form id="join" hidden>
<label for="guest-name">Your name</label>
<input id="guest-name" name="guestName" maxlength="40" required autocomplete="nickname">
<button type="submit">Watch</button>
</form>
<section id="thread" hidden>
<h1 id="title"></h1>
<p id="status"></p>
<p id="truncated" hidden>Older rows are not shown.</p>
<ol id="rows"></ol>
<h2>Suggest a message</h2>
<p>The owner reads it first and sends it to the agent or dismisses it.</p>
<form id="suggest">
<textarea id="message" name="text" maxlength="4000" required aria-label="Message for the owner"></textarea>
<input id="files" type="file" multiple accept="${GUEST_ATTACHMENT_TYPES.join(",")}" aria-label="Attachments: up to ${GUEST_ATTACHMENT_LIMIT}, 10 MiB each">
<button type="submit">Send to the owner</button>
</form>
<ul id="messages"></ul>
</section>
</main>
<script src="/g/page.js"></script>
</body>
</html>
`;

export const GUEST_PAGE_SCRIPT = `"use strict";
(() => {
  const base = location.pathname.replace(/\\/$/, "");
  const byId = (id) => document.getElementById(id);
  const headers = { "content-type": "application/json", "x-loom-csrf": "1" };
  let socket = null;
  let ended = false;
  function notice(text) { const n = byId("notice"); n.textContent = text; n.hidden = text === ""; }
  function render(view) {
    byId("join").hidden = true;
    byId("thread").hidden = false;
    byId("title").textContent = view.title;
    byId("status").textContent = (view.working ? "Working" : "Idle") + " · watching as " + view.guestName;
    byId("truncated").hidden = !view.truncated;
    const rows = byId("rows");
    rows.replaceChildren(...view.rows.map((row) => {
      const li = document.createElement("li");
      li.dataset.kind = row.kind;
      li.textContent = row.paths.length === 0 ? row.text : row.text + ": " + row.paths.join(", ");
      return li;
    }));
    byId("messages").replaceChildren(...view.messages.map((m) => {
      const li = document.createElement("li");
      li.dataset.status = m.status;
      li.textContent = m.text + " (" + m.status + ")";
      return li;
    }));
  }
  /** A picked file as the message body carries it: its bytes in base64. */
  function attachment(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve({ name: file.name, type: file.type || "application/octet-stream", data: String(reader.result).replace(/^[^,]*,/, "") });
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }
  function end() {
    ended = true;
    notice("This share has ended.");
    byId("suggest").hidden = true;
    byId("join").hidden = true;
  }
  function follow() {
    if (socket !== null || ended) return;
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/ws");
    socket.onmessage = (event) => {
      const update = JSON.parse(event.data);
      if (update.kind === "view") render(update.view);
      else if (update.kind === "ended") end();
    };
    socket.onclose = () => { socket = null; if (!ended) end(); };
  }
  async function load() {
    const answer = await fetch(base + "/view", { credentials: "same-origin" });
    if (answer.ok) { render(await answer.json()); follow(); return; }
    byId("join").hidden = false;
  }
  byId("join").addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = await fetch(base + "/redeem", { method: "POST", headers, body: JSON.stringify({ guestName: byId("guest-name").value }), credentials: "same-origin" });
    if (answer.ok) { notice(""); await load(); return; }
    const body = await answer.json().catch(() => null);
    notice(body && body.error ? body.error.message : "This link cannot be opened.");
  });
  byId("suggest").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = byId("message").value;
    const attachments = await Promise.all([...byId("files").files].map(attachment));
    const answer = await fetch(base + "/messages", { method: "POST", headers, body: JSON.stringify({ text, attachments }), credentials: "same-origin" });
    if (answer.ok) { byId("message").value = ""; byId("files").value = ""; notice("Sent to the owner."); return; }
    const body = await answer.json().catch(() => null);
    notice(body && body.error ? body.error.message : "The message was not sent.");
  });
  load().catch(() => notice("This link cannot be opened."));
})();
`;
