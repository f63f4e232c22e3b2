/**
 * Terminal styling for the CLI: colour only when the stream is a terminal and `NO_COLOR` is
 * not set (https://no-color.org: any non-empty value turns colour off), so piped output and
 * `--json` stay plain.
 */
export interface Style {
  readonly enabled: boolean;
  ok(text: string): string;
  warn(text: string): string;
  fail(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

interface StreamLike {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

/** True when colour may be used on this stream in this environment. */
export function colourAllowed(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

const paint = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/** A style for one stream: ANSI colours when allowed, identity functions otherwise. */
export function createStyle(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  if (!colourAllowed(stream, env)) {
    const plain = (text: string) => text;
    return { enabled: false, ok: plain, warn: plain, fail: plain, dim: plain, bold: plain };
  }
  return { enabled: true, ok: paint(32, 39), warn: paint(33, 39), fail: paint(31, 39), dim: paint(2, 22), bold: paint(1, 22) };
}

/** A transient status line, erased when done. */
export interface Progress {
  update(text: string): void;
  done(): void;
}

/**
 * A progress line for work that may take more than a second: shown on a terminal only, on
 * the given stream (stderr), and erased before the real output is written.
 */
export function progressLine(stream: StreamLike, text: string): Progress {
  if (stream.isTTY !== true) return { update() {}, done() {} };
  let shown = false;
  const show = (t: string) => {
    stream.write(`\r\u001b[2K${t}`);
    shown = true;
  };
  show(text);
  return {
    update: show,
    done() {
      if (shown) stream.write('\r\u001b[2K');
      shown = false;
    },
  };
}
