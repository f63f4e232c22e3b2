import { HanactlError } from '../../shared/errors.js';

/**
 * The largest message of a database server a driver reads: a row, an error, a notice. A row is
 * assembled and decoded whole before the result cap can cut it, so without a bound one wide
 * value (`repeat('x', 600000000)`) costs the daemon its size several times over, or more than
 * V8 can hold in one string. Every cell shown is cut to a few hundred characters anyway; a row
 * this wide can never be shown, only selected differently.
 */
export const MAX_SERVER_MESSAGE_BYTES = 16 * 1024 * 1024;

/** `bytes` as a short figure: `16 MiB`, `572.2 MiB`. */
function mib(bytes: number): string {
  const value = bytes / (1024 * 1024);
  return `${Number.isInteger(value) ? value : value.toFixed(1)} MiB`;
}

/**
 * The call's failure when `engine` sent a message over `limit` (of `bytes`, when its header
 * says): it was not read whole, and the connection that carried it is given up (its pool opens
 * a new one).
 */
export function messageTooLarge(engine: string, bytes: number | undefined, limit = MAX_SERVER_MESSAGE_BYTES): HanactlError {
  const size = bytes === undefined ? '' : ` of ${mib(bytes)}`;
  return new HanactlError(
    'QUERY_FAILED',
    `${engine} sent a row (or message)${size}, over the ${mib(limit)} hanactl reads of one row: it was not read, ` +
      'and the connection was given up (the next call gets a new one). Select fewer or narrower columns, or cut wide values ' +
      'in SQL (left(col, 1000), substring, length(col)) to see part of them.',
  );
}

/** A driver's wire reader failed on what the server sent: the connection is given up rather than the daemon. */
export function unreadableMessage(engine: string, err: unknown): HanactlError {
  const why = (err as { code?: unknown })?.code;
  return new HanactlError(
    'QUERY_FAILED',
    `What ${engine} sent could not be read${typeof why === 'string' ? ` (${why})` : ''}; the connection was given up (the next call gets a new one).`,
  );
}

/** Where a message over the limit starts in a chunk (as far as this chunk holds it), and its size. */
export interface MessageOverLimit {
  readonly at: number;
  readonly bytes: number;
}

/** One protocol's framing: its header's size, and what a header says (read in stream order). */
export interface Framing {
  readonly headerBytes: number;
  /** The body bytes that follow `header`, and the size to hold against the limit. */
  measure(header: Buffer): { readonly body: number; readonly size: number };
}

/**
 * Follows a protocol's message framing across the chunks of a stream, reading only the headers:
 * the first message whose size is over `limit` is reported before any of it is handed on.
 */
export class FrameScanner {
  readonly #framing: Framing;
  readonly #limit: number;
  readonly #header: Buffer;
  #headerHave = 0;
  #bodyLeft = 0;

  constructor(framing: Framing, limit: number) {
    this.#framing = framing;
    this.#limit = limit;
    this.#header = Buffer.alloc(framing.headerBytes);
  }

  /** Reads `chunk`'s headers; the first message over the limit, or undefined when every message is within it. */
  scan(chunk: Uint8Array): MessageOverLimit | undefined {
    const headerBytes = this.#header.length;
    let i = 0;
    while (i < chunk.length) {
      if (this.#bodyLeft > 0) {
        const n = Math.min(this.#bodyLeft, chunk.length - i);
        this.#bodyLeft -= n;
        i += n;
        continue;
      }
      const start = i - this.#headerHave;
      const n = Math.min(headerBytes - this.#headerHave, chunk.length - i);
      this.#header.set(chunk.subarray(i, i + n), this.#headerHave);
      this.#headerHave += n;
      i += n;
      if (this.#headerHave < headerBytes) break;
      this.#headerHave = 0;
      const { body, size } = this.#framing.measure(this.#header);
      if (size > this.#limit) return { at: Math.max(0, start), bytes: size };
      this.#bodyLeft = body;
    }
    return undefined;
  }
}
