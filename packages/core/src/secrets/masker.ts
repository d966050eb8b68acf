/** What a secret's value is replaced with in a job's logs and result. */
export const SECRET_MASK = "***";
/** Shorter values are not masked: they would turn up by chance all over the logs. */
export const MIN_SECRET_CHARS = 4;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Replaces secret values in a job's output, as a stream (a value split across two chunks is
 * still masked: the end of a chunk that could begin one is held back until the next), and in its
 * result. Costs nothing while it knows no secret.
 */
export class SecretMasker {
  private readonly values = new Set<string>();
  private pattern: RegExp | null = null;
  private held = "";

  get empty(): boolean {
    return this.values.size === 0;
  }

  add(value: string): void {
    if (value.length < MIN_SECRET_CHARS || this.values.has(value)) return;
    this.values.add(value);
    // Longest first: a secret that contains another is masked whole.
    const sorted = [...this.values].sort((a, b) => b.length - a.length);
    this.pattern = new RegExp(sorted.map(escapeRegExp).join("|"), "g");
  }

  mask(text: string): string {
    if (!this.pattern || text.length < MIN_SECRET_CHARS) return text;
    return text.replace(this.pattern, SECRET_MASK);
  }

  /** The part of the stream that can be written now (masked); keeps back a possible secret's start. */
  push(chunk: string): string {
    if (!this.pattern) {
      const out = this.held + chunk;
      this.held = "";
      return out;
    }
    const text = this.mask(this.held + chunk);
    const keep = this.heldBack(text);
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  /** What was held back, at the end of the stream. */
  end(): string {
    const rest = this.mask(this.held);
    this.held = "";
    return rest;
  }

  /** A JSON value with secrets masked in its strings (keys included). */
  maskValue(value: unknown): unknown {
    if (!this.pattern) return value;
    if (typeof value === "string") return this.mask(value);
    if (Array.isArray(value)) return value.map((item) => this.maskValue(item));
    if (typeof value === "object" && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[this.mask(key)] = this.maskValue(item);
      return out;
    }
    return value;
  }

  /** Length of the longest end of `text` that is the beginning of a secret (not the whole). */
  private heldBack(text: string): number {
    let keep = 0;
    for (const value of this.values) {
      const from = Math.max(0, text.length - value.length + 1);
      for (let at = text.indexOf(value[0]!, from); at !== -1; at = text.indexOf(value[0]!, at + 1)) {
        if (text.length - at <= keep) break;
        if (value.startsWith(text.slice(at))) {
          keep = text.length - at;
          break;
        }
      }
    }
    return keep;
  }
}
