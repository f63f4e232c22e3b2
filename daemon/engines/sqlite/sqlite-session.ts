import { HanactlError } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import type { StatementResult } from '../driver.js';
import { rowBudget } from '../row-bytes.js';
import { normaliseDriverError } from '../scrub.js';
import { setCell, toJsonValue, uniqueColumnNames } from '../values.js';
import { ConnectionState } from './sqlite-state.js';

/** The slice of better-sqlite3's statement API the session uses. */
export interface SqliteStatement {
  readonly reader: boolean;
  readonly readonly: boolean;
  columns(): { name: string; type: string | null }[];
  safeIntegers(on?: boolean): this;
  raw(on?: boolean): this;
  iterate(...params: unknown[]): IterableIterator<unknown[]>;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

/** The slice of better-sqlite3's database API the session uses. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  function(name: string, options: { deterministic?: boolean; varargs?: boolean }, fn: (...args: unknown[]) => unknown): unknown;
  close(): void;
  readonly inTransaction: boolean;
  readonly open: boolean;
}

/**
 * Run after a writable call: SQLite keeps `last_insert_rowid()` and `changes()` per connection,
 * so the next caller on it would read what this one inserted or changed. An insert of rowid 0
 * and a delete of nothing leave 0 in both; they touch a temporary table made and rolled back in
 * the same transaction, so nothing of them stays either (the rollback does not undo the two
 * counters: they are not transactional). `total_changes()` cannot be reset on an open
 * connection; it counts rows changed through it, not which.
 */
const FORGET_LAST_CHANGE =
  'BEGIN; CREATE TEMP TABLE "hanactl_forget_last_change"(x); INSERT INTO temp."hanactl_forget_last_change"(rowid) VALUES (0); DELETE FROM temp."hanactl_forget_last_change" WHERE 0; ROLLBACK';

/** What one `execute` needs besides the SQL and its parameters. */
export interface SessionExecuteOptions {
  readonly maxRows: number;
  /** No row is read after those kept reach this many bytes (row-bytes.ts). */
  readonly maxBytes?: number;
  readonly readOnly: boolean;
}

/**
 * One open SQLite file, synchronous, living inside the host child process. A read runs with
 * `PRAGMA query_only` on, inside a transaction that is always rolled back; a write commits.
 * Rows are iterated and the iterator dropped after `maxRows + 1`, or once the rows kept reach
 * `maxBytes`, so a large table or a wide result is never loaded whole. `mcp_context(name)` reads the values of the last `setContext`.
 */
export class SqliteSession {
  readonly #db: SqliteDatabase;
  readonly #state: ConnectionState;
  #context: Readonly<Record<string, string>> = {};
  #broken = false;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    db.function('mcp_context', { deterministic: false }, (name) =>
      typeof name === 'string' ? (this.#context[name.trim().toUpperCase()] ?? null) : null,
    );
    this.#state = new ConnectionState(db);
  }

  /** Runs exactly one statement; throws `HanactlError` only. */
  execute(sql: string, params: readonly Param[], options: SessionExecuteOptions): StatementResult {
    const db = this.#db;
    db.pragma(`query_only = ${options.readOnly ? 'ON' : 'OFF'}`);
    db.exec('BEGIN');
    let commit = false;
    try {
      const stmt = db.prepare(sql);
      if (options.readOnly && !stmt.readonly) {
        throw new HanactlError(
          'STATEMENT_REFUSED',
          'Refused: this statement would change the database, and this connection is read-only.',
          {
            rule: 'engine-read-only',
          },
        );
      }
      const bound = params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
      if (!stmt.reader) {
        const info = stmt.run(...bound);
        commit = !options.readOnly;
        return { columns: [], rows: [], rowCount: 0, truncated: false, affectedRows: info.changes };
      }
      stmt.safeIntegers(true).raw(true);
      const cols = stmt.columns();
      const names = uniqueColumnNames(cols.map((c) => c.name));
      const rows: StatementResult['rows'] = [];
      let truncated = false;
      const budget = rowBudget(options.maxBytes);
      for (const values of stmt.iterate(...bound)) {
        if (rows.length === options.maxRows || budget?.full) {
          truncated = true;
          break; // leaving the loop returns the iterator and finalises the step
        }
        budget?.add(values);
        const row: Record<string, ReturnType<typeof toJsonValue>> = {};
        names.forEach((name, i) => {
          setCell(row, name, toJsonValue(values[i]));
        });
        rows.push(row);
      }
      commit = !options.readOnly;
      return { columns: cols.map((c, i) => ({ name: names[i] ?? c.name, type: c.type ?? '' })), rows, rowCount: rows.length, truncated };
    } catch (err) {
      if (err instanceof HanactlError) throw err;
      const e = err as { code?: string };
      // The file no longer reads as a database on this handle (e.g. a PRAGMA key changed how it
      // is read): the session is spent, and the host process ends so the pool opens a fresh one.
      if (e.code === 'SQLITE_NOTADB') this.#broken = true;
      throw normaliseDriverError(err, 'QUERY_FAILED', e.code ? { nativeCode: e.code } : {});
    } finally {
      try {
        this.#end(commit);
      } finally {
        // Cleaned as it is returned, not only when next borrowed: nothing this call changed in
        // the connection reaches the next caller. A connection that cannot be put back is spent.
        this.#context = {};
        if (!this.#state.restore(sql)) this.#broken = true;
        else if (!options.readOnly) this.#forgetLastChange();
      }
    }
  }

  /**
   * True once a transaction could not be ended or the connection could not be put back as it
   * was opened: the session must not be reused, and the host ends its process after replying.
   */
  get broken(): boolean {
    return this.#broken;
  }

  #end(commit: boolean): void {
    if (!this.#db.inTransaction) return;
    try {
      this.#db.exec(commit ? 'COMMIT' : 'ROLLBACK');
    } catch (err) {
      this.#broken = true;
      // A write whose COMMIT failed did not happen: say so rather than report its result.
      if (commit) throw normaliseDriverError(err, 'QUERY_FAILED', { nativeCode: (err as { code?: string }).code ?? 'SQLITE_ERROR' });
    }
  }

  /** A connection whose counters cannot be cleared is not handed to another caller. */
  #forgetLastChange(): void {
    try {
      this.#db.exec(FORGET_LAST_CHANGE);
    } catch {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      this.#broken = true;
    }
  }

  ping(): void {
    const it = this.#db.prepare('SELECT 1').raw(true).iterate();
    it.next();
    it.return?.();
  }

  /** Back to a clean state for the next borrower: no open transaction, read-only, no context. */
  reset(): void {
    if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
    this.#db.pragma('query_only = ON');
    this.#context = {};
  }

  version(): string | null {
    const it = this.#db.prepare('SELECT sqlite_version()').raw(true).iterate();
    const first = it.next();
    it.return?.();
    return first.done ? null : `SQLite ${String(first.value[0])}`;
  }

  /** Clears every context value, then sets these (names trimmed and upper-cased). */
  setContext(values: Readonly<Record<string, string>>): void {
    const next: Record<string, string> = {};
    for (const [name, value] of Object.entries(values)) next[name.trim().toUpperCase()] = value;
    this.#context = next;
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
