/**
 * Splits a warm process's output stream into log text and protocol messages. A message is
 * `<mark><json>\n` anywhere in the stream (the user's output may not end with a newline); the
 * mark starts with an ASCII record separator and a per-process nonce so that ordinary output is
 * never taken for a message. A chunk may end inside a mark: that part is held back until the next.
 */
export class FrameSplitter {
  private readonly mark: string;
  private pending = "";
  private readonly onText: (text: string) => void;
  private readonly onMessage: (payload: string) => void;

  constructor(mark: string, onText: (text: string) => void, onMessage: (payload: string) => void) {
    this.mark = mark;
    this.onText = onText;
    this.onMessage = onMessage;
  }

  push(chunk: string): void {
    let data = this.pending + chunk;
    this.pending = "";
    for (;;) {
      const at = data.indexOf(this.mark);
      if (at === -1) break;
      const end = data.indexOf("\n", at + this.mark.length);
      if (end === -1) {
        if (at > 0) this.onText(data.slice(0, at));
        this.pending = data.slice(at);
        return;
      }
      if (at > 0) this.onText(data.slice(0, at));
      this.onMessage(data.slice(at + this.mark.length, end));
      data = data.slice(end + 1);
    }
    // Hold back a trailing prefix of the mark (it may complete in the next chunk).
    const keep = this.partialMarkLength(data);
    if (data.length > keep) this.onText(data.slice(0, data.length - keep));
    this.pending = keep > 0 ? data.slice(data.length - keep) : "";
  }

  /** Text held back (at exit: it was output, not a message). */
  flush(): void {
    if (this.pending) this.onText(this.pending);
    this.pending = "";
  }

  private partialMarkLength(data: string): number {
    const max = Math.min(this.mark.length - 1, data.length);
    for (let n = max; n > 0; n--) {
      if (data.endsWith(this.mark.slice(0, n))) return n;
    }
    return 0;
  }
}
