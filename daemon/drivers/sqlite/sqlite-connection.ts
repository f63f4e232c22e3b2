import { HanactlError } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import type { DriverConnection, ExecuteOptions, StatementResult } from '../driver.js';
import { normaliseDriverError } from '../scrub.js';
import { toJsonValue, uniqueColumnNames } from '../values.js';

/** The slice of better-sqlite3's API the driver uses. */
export interface SqliteStatement {
  readonly reader: boolean;
  readonly readonly: boolean;
  columns(): { name: string; type: string | null }[];
  safeIntegers(on?: boolean): this;
  raw(on?: boolean): this;
  iterate(...params: unknown[]): IterableIterator<unknown[]>;
  run(...params: unknown[]): { changes: number };
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  close(): void;
  readonly inTransaction: boolean;
  readonly open: boolean;
}

/**
 * One open SQLite file. A read runs with `PRAGMA query_only` on, inside a transaction that
 * is rolled back; rows are iterated and the iterator dropped after `maxRows + 1`, so a large
 * table is never loaded whole.
 */
export class SqliteConnection implements DriverConnection {
  readonly #db: SqliteDatabase;
  #broken = false;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  get broken(): boolean {
    return this.#broken || !this.#db.open;
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    if (options.signal?.aborted) throw new HanactlError('QUERY_CANCELLED', 'The statement was cancelled before it started.');
    const db = this.#db;
    db.pragma(`query_only = ${options.readOnly ? 'ON' : 'OFF'}`);
    db.exec('BEGIN');
    let commit = false;
    try {
      const stmt = db.prepare(sql);
      if (options.readOnly && !stmt.readonly) {
        throw new HanactlError('STATEMENT_REFUSED', 'Refused: this statement would change the database, and this connection is read-only.', {
          rule: 'engine-read-only',
        });
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
      for (const values of stmt.iterate(...bound)) {
        if (rows.length === options.maxRows) {
          truncated = true;
          break; // leaving the loop returns the iterator and finalises the step
        }
        const row: Record<string, ReturnType<typeof toJsonValue>> = {};
        names.forEach((name, i) => {
          row[name] = toJsonValue(values[i]);
        });
        rows.push(row);
      }
      commit = !options.readOnly;
      return { columns: cols.map((c, i) => ({ name: names[i] ?? c.name, type: c.type ?? '' })), rows, rowCount: rows.length, truncated };
    } catch (err) {
      if (err instanceof HanactlError) throw err;
      const e = err as { code?: string };
      throw normaliseDriverError(err, 'QUERY_FAILED', [], e.code ? { nativeCode: e.code } : {});
    } finally {
      try {
        if (db.inTransaction) db.exec(commit ? 'COMMIT' : 'ROLLBACK');
      } catch {
        this.#broken = true;
      }
    }
  }

  async ping(): Promise<void> {
    this.#db.prepare('SELECT 1').raw(true).iterate().next();
  }

  async reset(): Promise<void> {
    if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
    this.#db.pragma('query_only = ON');
  }

  async serverVersion(): Promise<string | undefined> {
    const it = this.#db.prepare('SELECT sqlite_version()').raw(true).iterate();
    const first = it.next();
    it.return?.();
    return first.done ? undefined : `SQLite ${String(first.value[0])}`;
  }

  async close(): Promise<void> {
    this.#broken = true;
    try {
      if (this.#db.open) this.#db.close();
    } catch {
      // closing twice or a busy handle: nothing left to do
    }
  }
}
