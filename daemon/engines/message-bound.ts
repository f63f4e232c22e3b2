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
