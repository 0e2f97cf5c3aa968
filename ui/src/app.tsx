import { useCallback, useEffect, useMemo, useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { type ConnectionState, SignedOutError, connectWire, fetchCapabilities, isSignedIn, signOut } from "./api.js";
import { Inbox } from "./inbox.js";
import { NewThreadDialog } from "./newThreadDialog.js";
import { ProvidersView } from "./providersView.js";
import { SchedulesView } from "./schedulesView.js";
import { ShortcutHelp, isTyping, nextWaiting, sidebarOrder } from "./shortcuts.js";
import { ShellStore, fetchFirstPage } from "./shellStore.js";
import { Sidebar } from "./sidebar.js";
import { useStore } from "./store.js";
import type { SearchHitView } from "../../src/contracts/tools/searchTools.js";
import type { JumpTarget } from "./timelineList.js";
import { ThreadView } from "./threadView.js";
import { TreeWaterfallView } from "./treeWaterfall.js";

type Phase = { kind: "checking" } | { kind: "signed-out" } | { kind: "connecting" } | { kind: "ready"; client: LoomWsClient; firstPage: Promise<readonly ThreadShell[] | null> } | { kind: "error"; message: string };

/** `/t/<id>/waterfall`: the tree's waterfall; else `/t/<id>`: the thread. */
const WATERFALL_PATH = /^\/t\/([^/]+)\/waterfall$/;

function threadIdOfPath(path: string): string | null {
  const match = WATERFALL_PATH.exec(path) ?? /^\/t\/(.+)$/.exec(path);
  return match === null ? null : decodeURIComponent(match[1]!);
}

export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: "checking" });
  const [connection, setConnection] = useState<ConnectionState>("connecting");

  useEffect(() => {
    let cancelled = false;
    let client: LoomWsClient | null = null;
    const start = async () => {
      if (!(await isSignedIn())) {
        if (!cancelled) setPhase({ kind: "signed-out" });
        return;
      }
      setPhase({ kind: "connecting" });
      // The list's first page travels beside the WebSocket's handshake and subscription (shellStore.ts).
      const firstPage = fetchFirstPage();
      client = await connectWire((state) => {
        if (cancelled) return;
        setConnection(state);
        if (state === "signed-out") setPhase({ kind: "signed-out" });
      });
      if (!cancelled) setPhase({ kind: "ready", client, firstPage });
    };
    start().catch((error: unknown) => {
      if (cancelled) return;
      setPhase(error instanceof SignedOutError ? { kind: "signed-out" } : { kind: "error", message: error instanceof Error ? error.message : String(error) });
    });
    return () => {
      cancelled = true;
      void client?.close();
    };
  }, []);

  if (phase.kind === "checking" || phase.kind === "connecting") return <div className="center muted">Connecting to Loom…</div>;
  if (phase.kind === "signed-out") {
    return (
      <div className="center signin">
        <h1>Loom</h1>
        <p>
          Sign in with a login link: run <code>loom open</code> on the machine where <code>loom serve</code> runs, and open the link it prints.
        </p>
      </div>
    );
  }
  if (phase.kind === "error") {
    return (
      <div className="center">
        <p className="error-text">Could not reach the Loom server: {phase.message}</p>
        <button onClick={() => location.reload()}>Retry</button>
      </div>
    );
  }
  return <Shell client={phase.client} connection={connection} firstPage={phase.firstPage} />;
}

function Shell({ client, connection, firstPage }: { readonly client: LoomWsClient; readonly connection: ConnectionState; readonly firstPage: Promise<readonly ThreadShell[] | null> }) {
  const active = useMemo(() => new ShellStore(client, false, firstPage), [client, firstPage]);
  const archived = useMemo(() => new ShellStore(client, true), [client]);
  const [showArchived, setShowArchived] = useState(false);
  useEffect(() => {
    active.start();
    return () => active.stop();
  }, [active]);
  useEffect(() => {
    if (!showArchived) return;
    archived.start();
    return () => archived.stop();
  }, [archived, showArchived]);
  const shell = useStore(active);
  const archivedShell = useStore(archived);
  const [path, setPath] = useState(location.pathname);
  const [dialog, setDialog] = useState(false);
  const [capabilities, setCapabilities] = useState<CapabilitiesOutput | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [help, setHelp] = useState(false);
  // Phone width: the sidebar is a drawer (styles.css, max-width 720px), closed whenever a page opens.
  const [drawer, setDrawer] = useState(false);
  useEffect(() => setDrawer(false), [path]);

  useEffect(() => {
    fetchCapabilities().then(setCapabilities, () => undefined);
  }, [connection]);

  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const navigate = useCallback((next: string) => {
    if (next !== location.pathname) history.pushState(null, "", next);
    setPath(next);
    // Opening anything from the drawer, even the page already shown, closes it.
    setDrawer(false);
  }, []);
  const open = useCallback((threadId: string) => navigate(threadId === "" ? "/" : `/t/${encodeURIComponent(threadId)}`), [navigate]);
  // A search hit opens its thread scrolled to the matched item (each jump a new object, so the same hit twice jumps twice).
  const [jumpTo, setJumpTo] = useState<JumpTarget | null>(null);
  const jump = useCallback(
    (hit: SearchHitView) => {
      setJumpTo({ threadId: hit.threadId, itemId: hit.itemId, position: hit.position });
      open(hit.threadId);
    },
    [open],
  );

  const selected = threadIdOfPath(path);
  const allThreads = useMemo(() => new Map([...shell.threads, ...archivedShell.threads]), [shell.threads, archivedShell.threads]);

  // Keyboard first (ui/src/shortcuts.tsx lists them): j/k and Enter through the sidebar, w the next thread waiting on you,
  // n a new thread, / search, ? help, g i / g s / g p the inbox, schedules and providers.
  useEffect(() => {
    let pendingG = false;
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e)) return;
      if (pendingG) {
        pendingG = false;
        if (e.key === "i") open("");
        else if (e.key === "s") navigate("/schedules");
        else if (e.key === "p") navigate("/providers");
        return;
      }
      if (e.key === "Escape") {
        setDialog(false);
        setHelp(false);
      } else if (help || dialog || document.querySelector("[role=dialog]") !== null) return;
      else if (e.key === "g") pendingG = true;
      else if (e.key === "?") setHelp(true);
      else if (e.key === "n") {
        e.preventDefault();
        setDialog(true);
      } else if (e.key === "/") {
        e.preventDefault();
        document.querySelector<HTMLInputElement>(".sidebar .search")?.focus();
      } else if (e.key === "j" || e.key === "k") {
        const order = sidebarOrder();
        if (order.length === 0) return;
        const at = order.indexOf(cursor ?? selected ?? "");
        const next = at === -1 ? (e.key === "j" ? 0 : order.length - 1) : Math.min(Math.max(at + (e.key === "j" ? 1 : -1), 0), order.length - 1);
        // The cursor leaves whatever had focus, so Enter opens the thread rather than pressing a button.
        if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
        setCursor(order[next]!);
      } else if (e.key === "Enter" && cursor !== null && document.activeElement === document.body) open(cursor);
      else if (e.key === "w") {
        const next = nextWaiting(shell.threads, selected);
        if (next !== null) {
          setCursor(next);
          open(next);
        }
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shell.threads, cursor, open, navigate, selected, help, dialog]);

  useEffect(() => {
    if (cursor !== null) document.querySelector(`.sidebar .tree-row[data-thread-id="${CSS.escape(cursor)}"]`)?.scrollIntoView({ block: "nearest" });
  }, [cursor]);

  return (
    <div className={drawer ? "layout drawer-open" : "layout"}>
      {connection === "reconnecting" ? (
        <div className="banner" role="status">
          Connection to the server lost — reconnecting… If the server came back on another port, run <code>loom open</code> for a sign-in link to its new address.
        </div>
      ) : null}
      <Sidebar
        threads={showArchived ? archivedShell.threads : shell.threads}
        partial={showArchived ? archivedShell.partial : shell.partial}
        selected={selected}
        cursor={cursor}
        open={open}
        jump={jump}
        onNewThread={() => setDialog(true)}
        showArchived={showArchived}
        setShowArchived={setShowArchived}
        client={client}
        navigate={navigate}
        path={path}
      />
      {drawer ? <div className="scrim" onClick={() => setDrawer(false)} aria-hidden="true" /> : null}
      <main className="main">
        <div className="phone-bar">
          <button className="drawer-toggle" aria-expanded={drawer} aria-controls="threads-drawer" onClick={() => setDrawer((shown) => !shown)}>
            ☰ Threads
          </button>
          <span className="brand">Loom</span>
          <button onClick={() => setDialog(true)}>New thread</button>
        </div>
        {path === "/schedules" ? (
          <SchedulesView open={open} providers={capabilities?.providers ?? []} />
        ) : path === "/providers" ? (
          <ProvidersView capabilities={capabilities} />
        ) : selected === null ? (
          <Inbox threads={shell.threads} open={open} />
        ) : WATERFALL_PATH.test(path) ? (
          <TreeWaterfallView key={`waterfall:${selected}`} rootThreadId={selected} threads={allThreads} open={open} />
        ) : (
          <ThreadView
            key={selected}
            client={client}
            threadId={selected}
            threads={allThreads}
            providers={capabilities?.providers ?? []}
            open={open}
            openWaterfall={(rootThreadId) => navigate(`/t/${encodeURIComponent(rootThreadId)}/waterfall`)}
            jumpTo={jumpTo?.threadId === selected ? jumpTo : null}
            jump={jump}
          />
        )}
      </main>
      <button className="signout" onClick={() => void signOut().then(() => location.reload(), () => undefined)} title="Sign out">
        Sign out
      </button>
      {dialog ? (
        <NewThreadDialog
          client={client}
          capabilities={capabilities}
          close={() => setDialog(false)}
          opened={(threadId) => {
            setDialog(false);
            open(threadId);
          }}
        />
      ) : null}
      {help ? <ShortcutHelp close={() => setHelp(false)} /> : null}
    </div>
  );
}
