import type {
  HanaBindValue,
  HanaCallback,
  HanaColumnInfoLike,
  HanaConnectionLike,
  HanaResultSetLike,
  HanaStatementLike,
} from '../../../../../daemon/engines/hana/hana-client-types.js';

/**
 * A stand-in for one `@sap/hana-client` connection that records, in order, every call the
 * driver makes at the client boundary: SQL, binds, options and timeouts. Statements answer one
 * row per column named in `rows`, or hang (until abort) when their SQL matches `hang`.
 */
export class RecordingConnection implements HanaConnectionLike {
  readonly transcript: string[] = [];
  readonly session = new Map<string, string>();
  rows: Record<string, { columns: string[]; values: unknown[][] }> = {};
  /** What `exec` of exactly this SQL answers (rows as objects), for statements run without a prepare. */
  execRows: Record<string, Record<string, unknown>[]> = {};
  hang: RegExp | undefined;
  #pendingAbort: (() => void) | undefined;

  #log(line: string): void {
    this.transcript.push(line);
  }
  connect(options: Record<string, unknown>, cb: HanaCallback): void {
    const { pwd: _pwd, ...shown } = options;
    this.#log(`connect ${JSON.stringify(shown)}`);
    setImmediate(() => cb(null));
  }
  setClientInfo(key: string, value: string): void {
    this.#log(`setClientInfo ${key}=${value}`);
  }
  setAutoCommit(flag: boolean): void {
    this.#log(`setAutoCommit ${flag}`);
  }
  exec(sql: string, params: HanaBindValue[], cb: HanaCallback<unknown>): void {
    this.#log(`exec ${sql} binds=${JSON.stringify(params)}`);
    const set = /^SET '([A-Z0-9_]+)' = '((?:[^']|'')*)'$/s.exec(sql);
    if (set?.[1]) this.session.set(set[1], (set[2] ?? '').replaceAll("''", "'"));
    const unset = /^UNSET '([A-Z0-9_]+)'$/.exec(sql);
    if (unset?.[1]) this.session.delete(unset[1]);
    const names = [...sql.matchAll(/SESSION_CONTEXT\('([A-Z0-9_]+)'\)/g)].map(([, n = '']) => n);
    const answer = names.length > 0 ? [Object.fromEntries(names.map((n) => [n, this.session.get(n) ?? null]))] : undefined;
    const scripted = this.execRows[sql];
    setImmediate(() => cb(null, scripted ?? answer));
  }
  prepare(sql: string, cb: HanaCallback<HanaStatementLike>): void {
    this.#log(`prepare ${sql}`);
    const data = this.rows[sql];
    const columns: HanaColumnInfoLike[] = (data?.columns ?? []).map((columnName) => ({
      columnName,
      nativeTypeName: 'NVARCHAR',
      nativeType: 11,
    }));
    const query = /^\s*(SELECT|WITH)/i.test(sql);
    const conn = this;
    const statement: HanaStatementLike = {
      getColumnInfo: () => (query ? columns : []),
      functionCode: () => (query ? 5 : 2),
      setTimeout: (seconds) => conn.#log(`statement.setTimeout ${seconds}`),
      execQuery(params, options, done) {
        conn.#log(`statement.execQuery binds=${JSON.stringify(params)} options=${JSON.stringify(options)}`);
        if (conn.hang?.test(sql)) {
          conn.#pendingAbort = () =>
            done(Object.assign(new Error('current operation cancelled by request and transaction rolled back'), { code: 139 }));
          return;
        }
        setImmediate(() => done(null, new RecordingResultSet(conn.transcript, columns, data?.values ?? [])));
      },
      exec(params, options, done) {
        conn.#log(`statement.exec binds=${JSON.stringify(params)} options=${JSON.stringify(options)}`);
        setImmediate(() => done(null, 0));
      },
      drop(done) {
        conn.#log('statement.drop');
        setImmediate(() => done(null));
      },
    };
    setImmediate(() => cb(null, statement));
  }
  rollback(cb: HanaCallback): void {
    this.#log('rollback');
    setImmediate(() => cb(null));
  }
  abort(cb: HanaCallback): void {
    this.#log('abort');
    const pending = this.#pendingAbort;
    this.#pendingAbort = undefined;
    setImmediate(() => {
      pending?.();
      cb(null);
    });
  }
  disconnect(cb: HanaCallback): void {
    this.#log('disconnect');
    setImmediate(() => cb(null));
  }
  state(): string {
    return 'connected';
  }
}

class RecordingResultSet implements HanaResultSetLike {
  #row = -1;
  constructor(
    readonly transcript: string[],
    readonly columns: HanaColumnInfoLike[],
    readonly values: unknown[][],
  ) {}
  getColumnInfo(): HanaColumnInfoLike[] {
    return this.columns;
  }
  next(): boolean;
  next(cb: HanaCallback<boolean>): void;
  next(cb?: HanaCallback<boolean>): boolean | undefined {
    this.transcript.push('resultSet.next');
    this.#row++;
    const has = this.#row < this.values.length;
    if (cb) setImmediate(() => cb(null, has));
    return cb ? undefined : has;
  }
  getValues(): Record<string, unknown>;
  getValues(cb: HanaCallback<Record<string, unknown>>): void;
  getValues(cb?: HanaCallback<Record<string, unknown>>): Record<string, unknown> | undefined {
    const row = Object.fromEntries(this.columns.map((c, i) => [c.columnName, this.values[this.#row]?.[i]]));
    if (cb) setImmediate(() => cb(null, row));
    return cb ? undefined : row;
  }
  getValue(colIndex: number, cb: HanaCallback<unknown>): void {
    setImmediate(() => cb(null, this.values[this.#row]?.[colIndex]));
  }
  close(cb: HanaCallback): void {
    this.transcript.push('resultSet.close');
    setImmediate(() => cb(null));
  }
}
