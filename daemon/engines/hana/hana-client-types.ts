/**
 * The smallest slice of `@sap/hana-client` the driver uses (as kysely's `PostgresPool`), so the
 * package stays optional, the types compile without it, and test fakes fit. Every method is the
 * callback form; the callback receives `null`/`undefined` on success.
 */

/** An error as the client reports it: `code` is HANA's numeric code, `sqlState` the SQLSTATE. */
export interface HanaClientError extends Error {
  readonly code?: number | string;
  readonly sqlState?: string;
}

export type HanaCallback<T = void> = (err: HanaClientError | null | undefined, result?: T) => void;

/** Values the client binds to `?` placeholders. */
export type HanaBindValue = string | number | boolean | null;

/** Result-set column metadata (`ResultSet.getColumnInfo()`). */
export interface HanaColumnInfoLike {
  readonly columnName: string;
  /** The HANA type code (`extension/TypeCode.js`: BIGINT 4, DECIMAL 5, ...). */
  readonly nativeType?: number;
  /** The HANA type name, e.g. `DECIMAL`, `NVARCHAR`. */
  readonly nativeTypeName?: string;
  readonly typeName?: string;
}

export interface HanaResultSetLike {
  getColumnInfo(): HanaColumnInfoLike[];
  /** Moves to the next row; `false` past the last. The sync form only when `nextCanBlock()` is false. */
  next(cb: HanaCallback<boolean>): void;
  next(): boolean;
  nextCanBlock?(): boolean;
  /** The current row keyed by column name. The sync form only when `getValuesCanBlock()` is false. */
  getValues(cb: HanaCallback<Record<string, unknown>>): void;
  getValues(): Record<string, unknown>;
  getValuesCanBlock?(): boolean;
  /** One value of the current row by index (used when column names repeat). */
  getValue(colIndex: number, cb: HanaCallback<unknown>): void;
  close(cb: HanaCallback): void;
}

export interface HanaStatementLike {
  /** Column metadata known after prepare; empty or absent for statements without a result set. */
  getColumnInfo?(): HanaColumnInfoLike[] | undefined;
  /** The statement kind (`extension/FunctionCode.js`), known after prepare. */
  functionCode?(): number;
  /** Client-side query timeout, in seconds (0 = none). */
  setTimeout?(seconds: number): void;
  execQuery(params: HanaBindValue[], options: Record<string, unknown>, cb: HanaCallback<HanaResultSetLike>): void;
  /** Runs a statement without a result set; the result is the affected row count. */
  exec(params: HanaBindValue[], options: Record<string, unknown>, cb: HanaCallback<unknown>): void;
  drop(cb: HanaCallback): void;
}

export interface HanaConnectionLike {
  connect(options: Record<string, unknown>, cb: HanaCallback): void;
  prepare(sql: string, cb: HanaCallback<HanaStatementLike>): void;
  exec(sql: string, params: HanaBindValue[], cb: HanaCallback<unknown>): void;
  setAutoCommit(flag: boolean): void;
  rollback(cb: HanaCallback): void;
  /** Cancels the request running on this connection, from outside it. */
  abort(cb: HanaCallback): void;
  disconnect(cb: HanaCallback): void;
  /** `connected` or `disconnected`. */
  state?(): string;
  setClientInfo?(key: string, value: string): void;
}

export interface HanaClientModule {
  createConnection(): HanaConnectionLike;
}
