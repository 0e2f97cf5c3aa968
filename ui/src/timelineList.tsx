import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, type RefObject, useLayoutEffect, useRef, useState } from "react";
import type { TurnItem } from "../../src/contracts/turnItems.js";
import { type ItemContext, TimelineItem } from "./timelineItems.js";

/** A search hit to bring into view: its item, and its position to know whether older pages must load first. */
export interface JumpTarget {
  readonly threadId: string;
  readonly itemId: string;
  readonly position: number;
}

/** Items rendered beyond the visible ones, above and below. */
const OVERSCAN = 10;
/** Within this many pixels of the top, the next older page loads by itself. */
const LOAD_OLDER_WITHIN = 400;

/**
 * The timeline's items, windowed: only the visible ones (and OVERSCAN more
 * each way) are in the DOM, each measured as it renders. It keeps the newest
 * item in view while the reader is at the bottom, loads older pages as the
 * reader nears the top (keeping what they look at in place), and `footer`
 * (live output, "Working…") follows the items.
 */
export function TimelineList(props: {
  readonly items: readonly TurnItem[];
  readonly ctx: ItemContext;
  /** Null when the thread's first item is loaded. */
  readonly historyCursor: string | null;
  readonly loadOlder: () => Promise<void>;
  readonly scroller: RefObject<HTMLDivElement | null>;
  readonly jumpTo: JumpTarget | null;
  readonly footer: ReactNode;
}) {
  const { items, scroller } = props;
  const list = useRef<HTMLDivElement>(null);
  const [margin, setMargin] = useState(0);
  const pinnedToBottom = useRef(true);
  const loading = useRef(false);
  /** A search jump holds the view until the reader scrolls by hand. */
  const jumping = useRef(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  // Before a page of older items lands: the scroll height and offset, so the view stays on the same items.
  const anchor = useRef<{ readonly height: number; readonly top: number } | null>(null);

  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 90,
    overscan: OVERSCAN,
    getItemKey: (index) => items[index]!.id,
    scrollMargin: margin,
  });

  useLayoutEffect(() => {
    if (list.current !== null && list.current.offsetTop !== margin) setMargin(list.current.offsetTop);
  });

  const loadOlder = () => {
    const el = scroller.current;
    if (loading.current || props.historyCursor === null || el === null) return;
    loading.current = true;
    anchor.current = { height: el.scrollHeight, top: el.scrollTop };
    props.loadOlder().then(
      () => {
        loading.current = false;
        setOlderError(null);
      },
      (e: unknown) => {
        loading.current = false;
        anchor.current = null;
        setOlderError(e instanceof Error ? e.message : String(e));
      },
    );
  };

  // Older items landed: shift the offset by what they added above, so the same items stay in view.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el === null || anchor.current === null) return;
    el.scrollTop = anchor.current.top + (el.scrollHeight - anchor.current.height);
    anchor.current = null;
  }, [items, scroller]);

  // Keep the newest item in view while the reader is at the bottom (also as items are measured).
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el !== null && pinnedToBottom.current && anchor.current === null && !jumping.current) el.scrollTop = el.scrollHeight;
  });

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el === null) return;
    const onScroll = () => {
      pinnedToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      if (el.scrollTop < LOAD_OLDER_WITHIN) loadOlder();
    };
    // Capture: before the virtualizer's own listener re-renders, so the bottom pin above sees where the reader is.
    const byHand = () => (jumping.current = false);
    el.addEventListener("scroll", onScroll, { passive: true, capture: true });
    for (const type of ["wheel", "pointerdown", "keydown", "touchstart"]) el.addEventListener(type, byHand, { passive: true });
    return () => {
      el.removeEventListener("scroll", onScroll, { capture: true });
      for (const type of ["wheel", "pointerdown", "keydown", "touchstart"]) el.removeEventListener(type, byHand);
    };
  });

  // A search hit: page back until its item is loaded, then center it and mark it. Until the reader scrolls
  // by hand, the view holds on it (centered again if measuring the rows around it moved it out of the window).
  const [landed, setLanded] = useState<JumpTarget | null>(null);
  const [, setPagesLoaded] = useState(0);
  const jumpTo = props.jumpTo;
  useLayoutEffect(() => {
    if (jumpTo === null || olderError !== null) return;
    if (landed === jumpTo) {
      const index = items.findIndex((item) => item.id === jumpTo.itemId);
      if (jumping.current && index !== -1 && !virtualizer.getVirtualItems().some((row) => row.index === index)) virtualizer.scrollToIndex(index, { align: "center" });
      return;
    }
    jumping.current = true;
    pinnedToBottom.current = false;
    const index = items.findIndex((item) => item.id === jumpTo.itemId);
    if (index !== -1) {
      virtualizer.scrollToIndex(index, { align: "center" });
      setLanded(jumpTo);
    } else if (props.historyCursor !== null && (items[0]?.position ?? 0) > jumpTo.position) {
      if (!loading.current) {
        loading.current = true;
        props.loadOlder().then(
          () => {
            // The page may have rendered before this ran; render again so the jump goes on.
            loading.current = false;
            setPagesLoaded((n) => n + 1);
          },
          (e: unknown) => {
            loading.current = false;
            setOlderError(e instanceof Error ? e.message : String(e));
          },
        );
      }
    }
  });

  const virtualItems = virtualizer.getVirtualItems();
  return (
    <>
      {props.historyCursor !== null ? (
        <button className="older" onClick={loadOlder}>
          Load older items
        </button>
      ) : null}
      {olderError ? <div className="error-text">{olderError}</div> : null}
      <div ref={list} className="timeline-items" style={{ height: virtualizer.getTotalSize() }} data-loaded={items.length} data-complete={props.historyCursor === null ? "true" : "false"}>
        {virtualItems.map((row) => (
          <div key={row.key} ref={virtualizer.measureElement} data-index={row.index} className={`timeline-row${landed !== null && items[row.index]!.id === landed.itemId ? " jump-target" : ""}`} style={{ transform: `translateY(${row.start - margin}px)` }}>
            <TimelineItem item={items[row.index]!} ctx={props.ctx} />
          </div>
        ))}
      </div>
      {props.footer}
    </>
  );
}
