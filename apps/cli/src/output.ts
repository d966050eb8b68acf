// How commands print: human text with progress bars on a terminal, or one JSON document with
// `--json` (nothing else on stdout, so `| jq` works). Progress goes to stderr, never to stdout.
import { SingleBar, Presets } from "cli-progress";

export interface Output {
  json: boolean;
  /** A line for humans (suppressed with --json). */
  info(message: string): void;
  /** The command's result: printed as JSON with --json, else through `human`. */
  result(value: unknown, human?: (value: unknown) => string): void;
  /** A progress bar on stderr when it is a terminal and not --json; otherwise silent. */
  progress(label: string, total: number): Progress;
}

export interface Progress {
  update(done: number, total?: number): void;
  stop(): void;
}

export function makeOutput(json: boolean): Output {
  const interactive = !json && process.stderr.isTTY === true;
  return {
    json,
    info(message) {
      if (!json) console.error(message);
    },
    result(value, human) {
      if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      else if (human) process.stdout.write(`${human(value)}\n`);
      else process.stdout.write(`${typeof value === "string" ? value : JSON.stringify(value, null, 2)}\n`);
    },
    progress(label, total) {
      if (!interactive) return { update() {}, stop() {} };
      const bar = new SingleBar(
        {
          format: `${label} [{bar}] {value}/{total} {duration_formatted}`,
          stream: process.stderr,
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      bar.start(total, 0);
      return {
        update(done, newTotal) {
          if (newTotal !== undefined) bar.setTotal(newTotal);
          bar.update(done);
        },
        stop() {
          bar.stop();
        },
      };
    },
  };
}
