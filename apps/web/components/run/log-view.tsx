"use client";
import { ArrowDownToLine } from "lucide-react";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";

/** Where a piece of output begins in the log text, and when the page got it. */
export interface LogChunk {
  offset: number;
  at: number;
}

/**
 * The time of each piece of a growing log. The log is one text (its lines carry no time), so the
 * page notes when each piece arrived (over the live stream or a poll); what was already written
 * when the page first saw the job is marked with the job's start time.
 */
export function useLogChunks(logs: string, startedAt: string | null): LogChunk[] {
  const [chunks, setChunks] = useState<LogChunk[]>([]);
  const seen = useRef(0);
  const start = startedAt ? new Date(startedAt).getTime() : null;
  useEffect(() => {
    const length = logs.length;
    if (length < seen.current) {
      // Another text (not a continuation): start over.
      seen.current = 0;
      setChunks([]);
    }
    if (length === seen.current) return;
    const offset = seen.current;
    const at = offset === 0 && start !== null ? start : Date.now();
    seen.current = length;
    setChunks((previous) => (offset === 0 ? [{ offset, at }] : [...previous, { offset, at }]));
  }, [logs, start]);
  return chunks;
}

/** Splits the log at the first line start at or after each chunk's offset: one segment per time. */
export function segments(logs: string, chunks: LogChunk[]): { text: string; at: number | null }[] {
  const out: { text: string; at: number | null }[] = [];
  let from = 0;
  let at: number | null = null;
  for (const chunk of chunks) {
    let boundary = chunk.offset;
    if (boundary > 0 && logs[boundary - 1] !== "\n") {
      const next = logs.indexOf("\n", boundary);
      boundary = next === -1 ? logs.length : next + 1;
    }
    if (boundary > from) {
      out.push({ text: logs.slice(from, boundary), at });
      from = boundary;
      at = chunk.at;
    } else if (boundary === from) {
      at = at ?? chunk.at;
    }
  }
  if (from < logs.length) out.push({ text: logs.slice(from), at });
  return out;
}

function clock(at: number): string {
  const date = new Date(at);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

const AT_BOTTOM_PX = 12;

/**
 * A job's log with the time of each piece of output in a gutter. It follows the output (stays
 * scrolled to the end as lines arrive) until the reader scrolls up; "Jump to latest" follows again.
 */
export function LogView({
  logs,
  complete,
  startedAt,
}: {
  logs: string;
  complete: boolean;
  startedAt: string | null;
}) {
  const chunks = useLogChunks(logs, startedAt);
  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const following = useRef(true);
  // Where the view last scrolled itself to the end.
  const followedTop = useRef(0);

  const pause = () => {
    following.current = false;
    setFollow(false);
  };
  const toEnd = (element: HTMLDivElement) => {
    element.scrollTop = element.scrollHeight;
    followedTop.current = element.scrollTop;
  };

  useLayoutEffect(() => {
    const element = box.current;
    if (!element || !following.current) return;
    // A scroll event comes a frame after the scroll: a reader who scrolled up just before new
    // output arrived would be pulled back to the end before onScroll saw the move. Being above
    // where the view last put itself (and not at the end, as after the text got shorter) is the
    // reader's doing.
    const atBottom = element.scrollHeight - element.scrollTop - element.clientHeight <= AT_BOTTOM_PX;
    if (!atBottom && element.scrollTop < followedTop.current - AT_BOTTOM_PX) pause();
    else toEnd(element);
  }, [logs, chunks]);

  const onScroll = () => {
    const element = box.current;
    if (!element) return;
    const atBottom = element.scrollHeight - element.scrollTop - element.clientHeight <= AT_BOTTOM_PX;
    if (atBottom !== following.current) {
      following.current = atBottom;
      setFollow(atBottom);
    }
  };
  const jump = () => {
    following.current = true;
    setFollow(true);
    if (box.current) toEnd(box.current);
  };

  const parts = logs ? segments(logs, chunks) : [];
  return (
    <div className="stack">
      <div className="row min-h-8" aria-live="polite">
        {follow ? (
          <span className="muted text-[13px]" data-testid="log-following">
            {complete ? "Showing the end of the output" : "Following the output"}
          </span>
        ) : (
          <>
            <span className="muted text-[13px]" data-testid="log-paused">
              Scrolled up: not following the output
            </span>
            <Button size="sm" onClick={jump} data-testid="log-jump">
              <ArrowDownToLine aria-hidden /> Jump to latest
            </Button>
          </>
        )}
      </div>
      <div
        ref={box}
        onScroll={onScroll}
        role="log"
        aria-label="Logs"
        tabIndex={0}
        data-testid="job-logs"
        className="max-h-[420px] overflow-auto rounded-md bg-[#1e1e1e] p-3 font-mono text-[12.5px] text-[#e6e6e6]"
      >
        {parts.length === 0 ? (
          <div className="whitespace-pre-wrap">{complete ? "(no output)" : "waiting for output…"}</div>
        ) : (
          parts.map((part, index) => (
            <div key={index} className="flex gap-3">
              <span
                className="w-[6.5rem] shrink-0 text-right text-[#b0b0b0] select-none"
                data-testid={part.at === null ? undefined : "log-time"}
                title={part.at === null ? undefined : new Date(part.at).toISOString()}
              >
                {part.at === null ? "" : clock(part.at)}
              </span>
              <span className="min-w-0 flex-1 break-all whitespace-pre-wrap">{part.text}</span>
            </div>
          ))
        )}
      </div>
    </div>
  );
}
