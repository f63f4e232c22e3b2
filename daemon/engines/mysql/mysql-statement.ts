import type { Column, JsonValue } from '../../../shared/schemas.js';
import type { StatementResult } from '../driver.js';
import { type RowBudget, rowBudget } from '../row-bytes.js';
import { setCell, uniqueColumnNames } from '../values.js';
import type { MysqlCommand, MysqlField, MysqlResultHeader } from './mysql-module.js';
import { cellReader, columnTypeName } from './mysql-types.js';

/**
 * After the row cap, rows are read and dropped (the connection stays usable, memory stays flat)
 * for at most this long; a statement still sending rows then is stopped with KILL QUERY.
 */
export const DRAIN_BUDGET_MS = 100;

/** How a statement ended: a result, or an error, and whether the cap had been reached. */
export type StatementOutcome =
  | { readonly ok: true; readonly result: StatementResult; readonly capped: boolean }
  | { readonly ok: false; readonly error: unknown; readonly capped: false };

/**
 * Reads one mysql2 command's events into a result, keeping at most `maxRows` rows, and none after
 * the rows kept reach `maxBytes` (row-bytes.ts); past either cap it is a capped result. The command
 * streams: rows are converted as they arrive, and past the cap they are dropped unconverted, so
 * a 100,000-row table never sits in memory. Only the first result set is kept (a CALL may send
 * more); later ones are read and dropped.
 */
export class RunningStatement {
  /** Settles (never rejects) when the command is over. */
  readonly done: Promise<StatementOutcome>;
  readonly #maxRows: number;
  readonly #budget: RowBudget | undefined;
  readonly #onDrainTooLong: () => void;
  readonly #rows: Record<string, JsonValue>[] = [];
  #columns: Column[] | undefined;
  #names: string[] = [];
  #readers: ((value: unknown) => JsonValue)[] = [];
  #phase: 'header' | 'rows' | 'ignore' = 'header';
  #affectedRows: number | undefined;
  #capped = false;
  #drainTimer: NodeJS.Timeout | undefined;
  #settle!: (outcome: StatementOutcome) => void;
  #settled = false;

  constructor(command: MysqlCommand, maxRows: number, onDrainTooLong: () => void, maxBytes?: number) {
    this.#maxRows = Math.max(0, Math.floor(maxRows));
    this.#budget = rowBudget(maxBytes);
    this.#onDrainTooLong = onDrainTooLong;
    this.done = new Promise((resolve) => {
      this.#settle = resolve;
    });
    command.on('fields', (fields) => this.#fields(fields));
    command.on('result', (row) => this.#result(row));
    command.on('error', (err) => this.fail(err));
    command.on('end', () => this.#finish());
  }

  /** True once more than `maxRows` rows arrived, or a row after those that reached `maxBytes`. */
  get capped(): boolean {
    return this.#capped;
  }

  /**
   * Ends the statement with an error. mysql2 reports a dead socket on the connection rather than
   * on an event-mode command, so the connection forwards those here. After the cap, an error
   * (our own KILL QUERY, or the socket cut) still yields the rows already kept.
   */
  fail(error: unknown): void {
    if (this.#capped) this.#finish();
    else this.#end({ ok: false, error, capped: false });
  }

  #fields(fields: MysqlField[] | undefined): void {
    if (!fields) {
      this.#phase = 'header';
      return;
    }
    if (this.#columns) {
      this.#phase = 'ignore';
      return;
    }
    this.#names = uniqueColumnNames(fields.map((f) => f.name));
    this.#columns = fields.map((f, i) => ({ name: this.#names[i] ?? f.name, type: columnTypeName(f) }));
    this.#readers = fields.map(cellReader);
    this.#phase = 'rows';
  }

  #result(row: unknown): void {
    if (this.#phase === 'header') {
      if (!this.#columns) this.#affectedRows = (row as MysqlResultHeader).affectedRows;
      return;
    }
    if (this.#phase !== 'rows' || this.#capped) return;
    if (this.#rows.length >= this.#maxRows || this.#budget?.full) {
      this.#capped = true;
      this.#drainTimer = setTimeout(this.#onDrainTooLong, DRAIN_BUDGET_MS);
      this.#drainTimer.unref();
      return;
    }
    this.#budget?.add(row as unknown[]);
    this.#rows.push(this.#toObject(row as unknown[]));
  }

  #toObject(values: readonly unknown[]): Record<string, JsonValue> {
    const out: Record<string, JsonValue> = {};
    for (let i = 0; i < this.#names.length; i++) {
      const name = this.#names[i] as string;
      const value = (this.#readers[i] as (v: unknown) => JsonValue)(values[i]);
      setCell(out, name, value);
    }
    return out;
  }

  #finish(): void {
    const result: StatementResult = {
      columns: this.#columns ?? [],
      rows: this.#rows,
      rowCount: this.#rows.length,
      truncated: this.#capped,
      ...(this.#affectedRows !== undefined ? { affectedRows: this.#affectedRows } : {}),
    };
    this.#end({ ok: true, result, capped: this.#capped });
  }

  #end(outcome: StatementOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#drainTimer) clearTimeout(this.#drainTimer);
    this.#settle(outcome);
  }
}
