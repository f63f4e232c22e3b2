import type { PolicyOptions, Verdict } from './types.js';

/** How many verdicts the daemon keeps: agents repeat a few statements; 512 short ones hold well under 1 MB. */
export const VERDICT_CACHE_ENTRIES = 512;

/**
 * Verdicts already given, so that a statement sent again is not lexed and parsed again (both
 * checks cost about 0.1 ms of CPU for `SELECT 1`, several times that for a longer read).
 *
 * A verdict is a pure function of the text and the PolicyOptions (checkStatement reads nothing
 * else: no clock, no file, no setting), and the rules themselves are the daemon's code, fixed for
 * its life. The key is therefore every field of PolicyOptions — engine, whether a person allowed
 * writes, the database (MySQL names resolve in it), whether the connection has unsigned context
 * values — and the exact text: a connection set read-write, given context values or moved to
 * another database asks with other options and gets a verdict of its own; nothing about a
 * connection is remembered here. Both checks still run on every text not seen before with the
 * same options, and the read-only transaction and session reset still run behind every verdict.
 *
 * Bounded: at most `entries` verdicts, the least recently used dropped first. The caller keeps
 * only short texts here (those judged on the event loop), so the memory held stays small.
 */
export class VerdictCache {
  readonly #entries: number;
  readonly #verdicts = new Map<string, Verdict>();
  /** Verdicts answered from the cache, since start. */
  hits = 0;

  constructor(entries = VERDICT_CACHE_ENTRIES) {
    this.#entries = entries;
  }

  get size(): number {
    return this.#verdicts.size;
  }

  /** The verdict on `sql` under `options`: the one given before, else `judge`'s, kept. */
  verdict(sql: string, options: PolicyOptions, judge: (sql: string, options: PolicyOptions) => Verdict): Verdict {
    const key = keyOf(sql, options);
    const known = this.#verdicts.get(key);
    if (known) {
      this.hits++;
      // Most recently used last: Map keeps insertion order, so the first key is the one to drop.
      this.#verdicts.delete(key);
      this.#verdicts.set(key, known);
      return known;
    }
    const fresh = judge(sql, options);
    this.#verdicts.set(key, fresh);
    if (this.#verdicts.size > this.#entries) this.#verdicts.delete(this.#verdicts.keys().next().value as string);
    return fresh;
  }
}

/** Fails to compile when PolicyOptions gains a field the key below does not carry. */
type Uncovered = Exclude<keyof PolicyOptions, 'dialect' | 'allowWrite' | 'unsignedContext' | 'rowSeparation' | 'sharedLogin' | 'database'>;
const everyOptionKeyed: [Uncovered] extends [never] ? true : Uncovered = true;
void everyOptionKeyed;

/**
 * Every PolicyOptions field, then the text. The database name is length-prefixed, so no name and
 * text can join into another pair's key.
 */
function keyOf(sql: string, options: PolicyOptions): string {
  const database = options.database ?? '';
  return `${options.dialect}|${options.allowWrite ? 'w' : 'r'}|${options.unsignedContext ? 'u' : '-'}${options.rowSeparation ? 's' : '-'}${options.sharedLogin ? 'l' : '-'}|${database.length}:${database}|${sql}`;
}
