import { useLayoutEffect, useRef } from "react";

/** How close to the bottom (px) still counts as reading the newest line. */
const AT_BOTTOM_SLACK = 8;

/**
 * A command's output that follows its newest line while the reader is at the
 * bottom; scrolled up to read earlier lines, it stays where it is.
 */
export function CommandOutput({ text }: { text: string }) {
  const ref = useRef<HTMLPreElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const pre = ref.current;
    if (pre !== null && following.current) pre.scrollTop = pre.scrollHeight;
  }, [text]);
  return (
    <pre
      ref={ref}
      className="output"
      data-testid="command-output"
      onScroll={(e) => {
        const pre = e.currentTarget;
        following.current = pre.scrollHeight - pre.scrollTop - pre.clientHeight <= AT_BOTTOM_SLACK;
      }}
    >
      {text}
    </pre>
  );
}
