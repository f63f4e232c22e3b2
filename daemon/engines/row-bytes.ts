/** Characters a shown cell keeps before it is cut, for a result cap of `bytes` (queries/result-cap.ts). */
export function cellCharsFor(bytes: number): number {
  return Math.max(100, Math.floor(bytes / 128));
}

/** However narrow the rows look once cut, rows stop being read once those kept hold this much. */
export const MAX_RAW_RESULT_BYTES = 32 * 1024 * 1024;

/**
 * Where a driver stops reading rows for a result cap of `maxBytes` (ExecuteOptions.maxBytes):
 * once the rows kept fill the cap as the result cap will show them (each cell cut to
 * `cellCharsFor`, counted twice, plus the text table's padding: an upper bound of what a row
 * adds), or once they hold MAX_RAW_RESULT_BYTES (or twice the cap) as read. More rows could
 * never be shown; reading them whole is what let one wide result take gigabytes of the daemon.
 */
export class RowBudget {
  readonly #shownLimit: number;
  readonly #rawLimit: number;
  readonly #cellChars: number;
  #shown = 0;
  #raw = 0;

  constructor(maxBytes: number) {
    this.#shownLimit = maxBytes;
    this.#rawLimit = Math.max(MAX_RAW_RESULT_BYTES, 2 * maxBytes);
    this.#cellChars = cellCharsFor(maxBytes);
  }

  /** True once no further row should be read. */
  get full(): boolean {
    return this.#shown >= this.#shownLimit || this.#raw >= this.#rawLimit;
  }

  /** Counts one row kept: its cells as read (strings, buffers; 8 for any other value). */
  add(values: Iterable<unknown>): void {
    this.#shown += 8;
    for (const value of values) {
      const size = typeof value === 'string' ? value.length : value instanceof Uint8Array ? 2 * value.byteLength + 2 : 8;
      this.#raw += size;
      this.#shown += 2 * Math.min(size, this.#cellChars) + 63;
    }
  }
}

/** A budget for `maxBytes`, or none (rows limited by count only). */
export function rowBudget(maxBytes: number | undefined): RowBudget | undefined {
  return maxBytes !== undefined && maxBytes > 0 ? new RowBudget(maxBytes) : undefined;
}
