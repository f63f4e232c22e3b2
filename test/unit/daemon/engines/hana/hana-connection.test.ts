import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import type {
  HanaBindValue,
  HanaCallback,
  HanaColumnInfoLike,
  HanaConnectionLike,
  HanaResultSetLike,
  HanaStatementLike,
} from '../../../../../daemon/engines/hana/hana-client-types.js';
import { HanaConnection } from '../../../../../daemon/engines/hana/hana-connection.js';
import { HanaDriver } from '../../../../../daemon/engines/hana/hana-driver.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { rejection } from './helpers.js';

/**
 * The statement flow (transaction mode, streaming, cancel, errors) against a scripted stand-in
 * that implements the same minimal client interface the driver declares. The real client is
 * exercised in hana-connect.test.ts and, with a server, in hana-live.test.ts.
 */

const PASSWORD = 'pl4nted-Secret-51ab';

type Script =
  | { kind: 'rows'; columns: HanaColumnInfoLike[]; rows: unknown[][]; syncFetch?: boolean }
  | { kind: 'write'; affected: number | undefined }
  | { kind: 'error'; error: Error & { code?: number; sqlState?: string }; at: 'prepare' | 'exec' }
  | { kind: 'hang'; abortable: boolean };

function hanaError(message: string, code: number, sqlState = 'HY000'): Error & { code: number; sqlState: string } {
  return Object.assign(new Error(message), { code, sqlState });
}

const later = (fn: () => void): void => {
  setImmediate(fn);
};

class FakeResultSet implements HanaResultSetLike {
  #row = -1;
  nextCalls = 0;
  closed = false;
  constructor(
    readonly columns: HanaColumnInfoLike[],
    readonly rows: unknown[][],
    readonly syncFetch: boolean,
  ) {}
  getColumnInfo(): HanaColumnInfoLike[] {
    return this.columns;
  }
  nextCanBlock(): boolean {
    return !this.syncFetch;
  }
  getValuesCanBlock(): boolean {
    return !this.syncFetch;
  }
  next(): boolean;
  next(cb: HanaCallback<boolean>): void;
  next(cb?: HanaCallback<boolean>): boolean | undefined {
    this.nextCalls++;
    this.#row++;
    const has = this.#row < this.rows.length;
    if (!cb) return has;
    later(() => cb(null, has));
    return undefined;
  }
  #current(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.columns.forEach((c, i) => {
      out[c.columnName] = this.rows[this.#row]?.[i];
    });
    return out;
  }
  getValues(): Record<string, unknown>;
  getValues(cb: HanaCallback<Record<string, unknown>>): void;
  getValues(cb?: HanaCallback<Record<string, unknown>>): Record<string, unknown> | undefined {
    if (!cb) return this.#current();
    const row = this.#current();
    later(() => cb(null, row));
    return undefined;
  }
  getValue(colIndex: number, cb: HanaCallback<unknown>): void {
    const value = this.rows[this.#row]?.[colIndex];
    later(() => cb(null, value));
  }
  close(cb: HanaCallback): void {
    this.closed = true;
    later(() => cb(null));
  }
}

class FakeConnection implements HanaConnectionLike {
  readonly log: string[] = [];
  readonly scripts = new Map<string, Script>();
  readonly resultSets: FakeResultSet[] = [];
  readonly statementTimeouts: number[] = [];
  readonly execOptions: Record<string, unknown>[] = [];
  readonly boundParams: HanaBindValue[][] = [];
  connectOptions: Record<string, unknown> | undefined;
  #pendingAbort: (() => void) | undefined;
  #state = 'connected';
  failExec: Map<string, Error> = new Map();

  connect(options: Record<string, unknown>, cb: HanaCallback): void {
    this.connectOptions = options;
    this.log.push('connect');
    later(() => cb(null));
  }
  setClientInfo(key: string, value: string): void {
    this.log.push(`clientInfo ${key}=${value}`);
  }
  prepare(sql: string, cb: HanaCallback<HanaStatementLike>): void {
    this.log.push(`prepare ${sql}`);
    const script = this.scripts.get(sql) ?? { kind: 'write', affected: 0 };
    if (script.kind === 'error' && script.at === 'prepare') {
      later(() => cb(script.error));
      return;
    }
    later(() => cb(null, this.#statement(sql, script)));
  }
  #statement(sql: string, script: Script): HanaStatementLike {
    const conn = this;
    return {
      getColumnInfo: () => (script.kind === 'rows' ? script.columns : []),
      functionCode: () => (script.kind === 'rows' || script.kind === 'hang' ? 5 : 2),
      setTimeout: (seconds: number) => {
        conn.statementTimeouts.push(seconds);
      },
      execQuery(params, options, cb) {
        conn.log.push(`execQuery ${sql}`);
        conn.boundParams.push(params);
        conn.execOptions.push(options);
        conn.#run(script, cb, () => {
          if (script.kind !== 'rows') throw new Error('not a query');
          const rs = new FakeResultSet(script.columns, script.rows, script.syncFetch ?? false);
          conn.resultSets.push(rs);
          cb(null, rs);
        });
      },
      exec(params, options, cb) {
        conn.log.push(`exec ${sql}`);
        conn.boundParams.push(params);
        conn.execOptions.push(options);
        conn.#run(script, cb, () => cb(null, script.kind === 'write' ? script.affected : undefined));
      },
      drop(cb) {
        conn.log.push(`drop ${sql}`);
        later(() => cb(null));
      },
    };
  }
  #run<T>(script: Script, cb: HanaCallback<T>, ok: () => void): void {
    if (script.kind === 'error') later(() => cb(script.error));
    else if (script.kind === 'hang') {
      if (script.abortable)
        this.#pendingAbort = () => cb(hanaError('current operation cancelled by request and transaction rolled back', 139));
    } else later(ok);
  }
  /** Session variables as SET / UNSET left them; `overwrite` plays something in the database changing one. */
  readonly session = new Map<string, string>();
  overwrite: Record<string, string> = {};
  exec(sql: string, _params: HanaBindValue[], cb: HanaCallback<unknown>): void {
    this.log.push(`direct ${sql}`);
    const failure = this.failExec.get(sql);
    if (failure) {
      later(() => cb(failure));
      return;
    }
    const set = /^SET '([A-Z0-9_]+)' = '((?:[^']|'')*)'$/s.exec(sql);
    const unset = /^UNSET '([A-Z0-9_]+)'$/.exec(sql);
    if (set?.[1]) this.session.set(set[1], (set[2] ?? '').replaceAll("''", "'"));
    if (unset?.[1]) this.session.delete(unset[1]);
    if (sql.includes('SESSION_CONTEXT(')) {
      const row = Object.fromEntries(
        [...sql.matchAll(/AS "([A-Z0-9_]+)"/g)].map(([, name = '']) => [name, this.overwrite[name] ?? this.session.get(name) ?? null]),
      );
      later(() => cb(null, [row]));
      return;
    }
    later(() => cb(null, sql.startsWith('SELECT VERSION') ? [{ VERSION: '2.00.076.00.1705400033' }] : [{ 1: 1 }]));
  }
  setAutoCommit(flag: boolean): void {
    this.log.push(`autocommit ${flag}`);
  }
  rollback(cb: HanaCallback): void {
    this.log.push('rollback');
    later(() => cb(null));
  }
  commit(cb: HanaCallback): void {
    this.log.push('commit');
    later(() => cb(null));
  }
  abort(cb: HanaCallback): void {
    this.log.push('abort');
    const pending = this.#pendingAbort;
    this.#pendingAbort = undefined;
    later(() => {
      pending?.();
      cb(null);
    });
  }
  disconnect(cb: HanaCallback): void {
    this.log.push('disconnect');
    this.#state = 'disconnected';
    later(() => cb(null));
  }
  state(): string {
    return this.#state;
  }
}

const col = (columnName: string, nativeTypeName: string, nativeType: number): HanaColumnInfoLike => ({
  columnName,
  nativeTypeName,
  nativeType,
});

function setup(cancelGraceMs = 1_000): { fake: FakeConnection; conn: HanaConnection } {
  const fake = new FakeConnection();
  const conn = new HanaConnection(fake, { serverNode: 'db:30015', communicationTimeoutMs: 2_000, cancelGraceMs });
  return { fake, conn };
}

/** A connection as HanaDriver makes it, with PASSWORD stored for the connection. */
async function connected(): Promise<{ fake: FakeConnection; conn: HanaConnection }> {
  const fake = new FakeConnection();
  const { target } = parseConnectionUrl('hana://SYSTEM@db:30015');
  const driver = new HanaDriver(
    target,
    { password: PASSWORD },
    { connectTimeoutMs: 1500 },
    { loadClient: () => Promise.resolve({ createConnection: () => fake }) },
  );
  const conn = (await driver.connect()) as HanaConnection;
  fake.log.length = 0;
  return { fake, conn };
}

const READ: ExecuteOptions = { maxRows: 100, timeoutMs: 5_000, readOnly: true };
const WRITE: ExecuteOptions = { maxRows: 100, timeoutMs: 5_000, readOnly: false };

function numbers(n: number): unknown[][] {
  return Array.from({ length: n }, (_, i) => [i + 1]);
}

describe('read-only calls', () => {
  it('run SET TRANSACTION READ ONLY with autocommit off, and always roll back', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SELECT ? AS N FROM DUMMY', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: [[7]] });
    const result = await conn.execute('SELECT ? AS N FROM DUMMY', [7], READ);
    expect(result).toEqual({ columns: [{ name: 'N', type: 'INTEGER' }], rows: [{ N: 7 }], rowCount: 1, truncated: false });
    expect(fake.log).toEqual([
      'autocommit false',
      'direct SET TRANSACTION READ ONLY',
      'prepare SELECT ? AS N FROM DUMMY',
      'execQuery SELECT ? AS N FROM DUMMY',
      'drop SELECT ? AS N FROM DUMMY',
      'rollback',
    ]);
    expect(fake.boundParams).toEqual([[7]]);
    expect(fake.resultSets[0]?.closed).toBe(true);
    expect(conn.broken).toBe(false);
  });

  it('roll back even when the statement fails, and never commit', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SELECT * FROM NOPE', { kind: 'error', at: 'prepare', error: hanaError('invalid table name: NOPE', 259) });
    await rejection(conn.execute('SELECT * FROM NOPE', [], READ));
    expect(fake.log.at(-1)).toBe('rollback');
    expect(fake.log).not.toContain('commit');
  });
});

describe('row streaming', () => {
  it('reads maxRows + 1 rows, never the whole result, and reports truncation', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('BIG', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: numbers(10_000) });
    const result = await conn.execute('BIG', [], { ...READ, maxRows: 3 });
    expect(result.rows).toEqual([{ N: 1 }, { N: 2 }, { N: 3 }]);
    expect(result.rowCount).toBe(3);
    expect(result.truncated).toBe(true);
    expect(fake.resultSets[0]?.nextCalls).toBe(4);
    expect(fake.resultSets[0]?.closed).toBe(true);
  });

  it('is not truncated at exactly maxRows', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('THREE', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: numbers(3) });
    const result = await conn.execute('THREE', [], { ...READ, maxRows: 3 });
    expect(result.rowCount).toBe(3);
    expect(result.truncated).toBe(false);
  });

  it('with maxRows 0 returns only whether rows exist', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SOME', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: numbers(2) });
    const result = await conn.execute('SOME', [], { ...READ, maxRows: 0 });
    expect(result).toMatchObject({ rows: [], rowCount: 0, truncated: true });
  });

  it('uses the synchronous fetch only when the client says it cannot block', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SYNC', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: numbers(5), syncFetch: true });
    const result = await conn.execute('SYNC', [], { ...READ, maxRows: 2 });
    expect(result.rows).toEqual([{ N: 1 }, { N: 2 }]);
    expect(result.truncated).toBe(true);
  });

  it('keeps decimals and big integers exact, and turns LOBs into hex or text', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('TYPES', {
      kind: 'rows',
      columns: [
        col('D', 'DECIMAL', 5),
        col('BIG', 'BIGINT', 4),
        col('SMALLBIG', 'BIGINT', 4),
        col('B', 'BLOB', 27),
        col('C', 'NCLOB', 26),
        col('T', 'TIMESTAMP', 16),
        col('F', 'DOUBLE', 7),
        col('BOOL', 'BOOLEAN', 28),
        col('NUL', 'NVARCHAR', 11),
      ],
      rows: [
        [
          '12345678901234567890.123456789',
          '9223372036854775807',
          '42',
          Buffer.from([0xde, 0xad, 0xbe, 0xef]),
          'long text',
          '2024-05-01 12:34:56.123000000',
          1.5,
          true,
          null,
        ],
      ],
    });
    const result = await conn.execute('TYPES', [], READ);
    expect(result.rows[0]).toEqual({
      D: '12345678901234567890.123456789',
      BIG: '9223372036854775807',
      SMALLBIG: 42,
      B: '\\xdeadbeef',
      C: 'long text',
      T: '2024-05-01 12:34:56.123000000',
      F: 1.5,
      BOOL: true,
      NUL: null,
    });
    expect(result.columns.map((c) => c.type)).toEqual([
      'DECIMAL',
      'BIGINT',
      'BIGINT',
      'BLOB',
      'NCLOB',
      'TIMESTAMP',
      'DOUBLE',
      'BOOLEAN',
      'NVARCHAR',
    ]);
  });

  it('keeps both columns when names repeat', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('DUP', { kind: 'rows', columns: [col('A', 'INTEGER', 3), col('A', 'INTEGER', 3)], rows: [[1, 2]] });
    const result = await conn.execute('DUP', [], READ);
    expect(result.columns.map((c) => c.name)).toEqual(['A', 'A_2']);
    expect(result.rows).toEqual([{ A: 1, A_2: 2 }]);
  });

  it('sets the client query timeout (seconds) and a communication timeout longer than the statement timeout', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('Q', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: [[1]] });
    await conn.execute('Q', [], { ...READ, timeoutMs: 30_000 });
    expect(fake.statementTimeouts).toEqual([31]);
    expect(fake.execOptions[0]?.communicationTimeout).toBeGreaterThan(30_000);
  });
});

describe('writes', () => {
  it('run with autocommit and report affected rows', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('UPDATE T SET A = ?', { kind: 'write', affected: 3 });
    const result = await conn.execute('UPDATE T SET A = ?', ['x'], WRITE);
    expect(result).toEqual({ columns: [], rows: [], rowCount: 0, truncated: false, affectedRows: 3 });
    expect(fake.log).toEqual([
      'autocommit true',
      'prepare UPDATE T SET A = ?',
      'exec UPDATE T SET A = ?',
      'drop UPDATE T SET A = ?',
      'rollback',
    ]);
  });

  it('re-assert READ WRITE once after a read-only call', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('R', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: [[1]] });
    await conn.execute('R', [], READ);
    fake.log.length = 0;
    await conn.execute('W', [], WRITE);
    await conn.execute('W', [], WRITE);
    expect(fake.log.filter((l) => l.includes('READ WRITE'))).toEqual(['direct SET TRANSACTION READ WRITE']);
    expect(fake.log).not.toContain('commit');
  });

  it('omit affectedRows when the client reports none (DDL)', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('CREATE TABLE T (A INT)', { kind: 'write', affected: undefined });
    const result = await conn.execute('CREATE TABLE T (A INT)', [], WRITE);
    expect(result.affectedRows).toBeUndefined();
  });
});

describe('timeouts and cancellation', () => {
  it('abort the statement on the server at the deadline and report QUERY_TIMEOUT', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SLOW', { kind: 'hang', abortable: true });
    const started = Date.now();
    const err = await rejection(conn.execute('SLOW', [], { ...READ, timeoutMs: 100 }));
    expect(err.code).toBe('QUERY_TIMEOUT');
    expect(err.message).toContain('100 ms');
    expect(err.details.nativeCode).toBe(139);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(fake.log).toContain('abort');
    expect(fake.log.at(-1)).toBe('rollback');
    expect(conn.broken).toBe(false);
  });

  it('give the connection up when the statement does not stop within the grace period', async () => {
    const { fake, conn } = setup(150);
    fake.scripts.set('STUCK', { kind: 'hang', abortable: false });
    const started = Date.now();
    const err = await rejection(conn.execute('STUCK', [], { ...READ, timeoutMs: 100 }));
    expect(err.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(conn.broken).toBe(true);
    expect(fake.log).not.toContain('rollback');
  });

  it('cancel on the signal and report QUERY_CANCELLED', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SLOW', { kind: 'hang', abortable: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(conn.execute('SLOW', [], { ...READ, signal: controller.signal }));
    expect(err.code).toBe('QUERY_CANCELLED');
    expect(fake.log).toContain('abort');
    expect(conn.broken).toBe(false);
  });

  it('send nothing when the signal is already aborted', async () => {
    const { fake, conn } = setup();
    const controller = new AbortController();
    controller.abort();
    const err = await rejection(conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, signal: controller.signal }));
    expect(err.code).toBe('QUERY_CANCELLED');
    expect(fake.log).toEqual([]);
  });

  it('stop fetching when the deadline passes between rows', async () => {
    const { fake, conn } = setup();
    const slowRows: HanaResultSetLike = new FakeResultSet([col('N', 'INTEGER', 3)], numbers(100_000), false);
    const original = slowRows.next.bind(slowRows) as (cb: HanaCallback<boolean>) => void;
    (slowRows as { next: unknown }).next = (cb: HanaCallback<boolean>) => setTimeout(() => original(cb), 5);
    fake.scripts.set('MANY', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: [] });
    const prepare = fake.prepare.bind(fake);
    fake.prepare = (sql, cb) =>
      prepare(sql, (err, stmt) => {
        if (stmt) stmt.execQuery = (_p, _o, done) => setImmediate(() => done(null, slowRows));
        cb(err, stmt);
      });
    const started = Date.now();
    const err = await rejection(conn.execute('MANY', [], { ...READ, maxRows: 100_000, timeoutMs: 100 }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err.code).toBe('QUERY_TIMEOUT');
    expect(conn.broken).toBe(false);
  });
});

describe('errors', () => {
  it('keep HANA code and SQLSTATE, quote the statement as HANA did, and leave the connection usable', async () => {
    const { fake, conn } = await connected();
    // The quoted text is the agent's: the password and a wrong guess read the same, or the answer would confirm a guess.
    const wrong = 'pl4nted-Secret-00zz';
    for (const [name, quoted] of [
      ['BAD', PASSWORD],
      ['WORSE', wrong],
    ] as const)
      fake.scripts.set(name, {
        kind: 'error',
        at: 'exec',
        error: hanaError(`sql syntax error: incorrect syntax near "${quoted}": line 1 col 8`, 257, '42000'),
      });
    const err = await rejection(conn.execute('BAD', [], WRITE));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.details).toEqual({ nativeCode: 257, sqlState: '42000' });
    expect(err.message).toBe(`sql syntax error: incorrect syntax near "${PASSWORD}": line 1 col 8`);
    expect(err.message.replace(PASSWORD, 'GUESS')).toBe(
      (await rejection(conn.execute('WORSE', [], WRITE))).message.replace(wrong, 'GUESS'),
    );
    expect(conn.broken).toBe(false);
  });

  it('mark the connection broken when the client reports it lost', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('LOST', {
      kind: 'error',
      at: 'prepare',
      error: hanaError('Connection lost (RTE:[89008] Socket closed by peer)', -10807),
    });
    const err = await rejection(conn.execute('LOST', [], READ));
    expect(err.code).toBe('QUERY_FAILED');
    expect(conn.broken).toBe(true);
    expect((await rejection(conn.execute('SELECT 1 FROM DUMMY', [], READ))).code).toBe('CONNECT_FAILED');
  });

  it('refuse a call without a positive timeout or with a negative row cap, before any round trip', async () => {
    const { fake, conn } = setup();
    expect((await rejection(conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, timeoutMs: 0 }))).code).toBe('INVALID_REQUEST');
    expect((await rejection(conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, maxRows: -1 }))).code).toBe('INVALID_REQUEST');
    expect(fake.log).toEqual([]);
  });

  it('refuse a second statement while one is running', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('SLOW', { kind: 'hang', abortable: true });
    const first = conn.execute('SLOW', [], { ...READ, timeoutMs: 200 });
    const second = await rejection(conn.execute('SELECT 1 FROM DUMMY', [], READ));
    expect(second.code).toBe('INTERNAL');
    await rejection(first);
  });
});

describe('deadlines of every request', () => {
  it('bound a statement and its row fetches by the call’s own deadline, not the connection’s', async () => {
    const { fake, conn } = setup();
    fake.scripts.set('Q', { kind: 'rows', columns: [col('N', 'INTEGER', 3)], rows: [[1]] });
    await conn.execute('Q', [], { ...READ, timeoutMs: 500 });
    // 500 ms call + 1 s grace + 1 s: shorter than the 2 s upkeep bound, so the call's deadline decides.
    expect(fake.execOptions[0]?.communicationTimeout).toBe(2_500);
  });

  it('bound a request outside a call (ping) by the connect timeout, and give the connection up', async () => {
    const { fake, conn } = setup();
    fake.exec = (sql) => fake.log.push(`direct ${sql}`);
    const started = Date.now();
    const err = await rejection(conn.ping());
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain('no answer to SELECT 1 FROM DUMMY within 2000 ms');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(conn.broken).toBe(true);
  });
});

describe('session upkeep', () => {
  it('pings with SELECT 1 FROM DUMMY', async () => {
    const { fake, conn } = setup();
    await conn.ping();
    expect(fake.log).toEqual(['direct SELECT 1 FROM DUMMY']);
  });

  it('reports a failed ping as CONNECT_FAILED and marks the connection broken', async () => {
    const { fake, conn } = setup();
    fake.failExec.set('SELECT 1 FROM DUMMY', hanaError('Connection lost', -10807));
    const err = await rejection(conn.ping());
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain('db:30015');
    expect(conn.broken).toBe(true);
  });

  it('resets with a rollback and autocommit back on', async () => {
    const { fake, conn } = setup();
    await conn.reset();
    expect(fake.log).toEqual(['rollback', 'autocommit true']);
  });

  it('reads the server version from SYS.M_DATABASE', async () => {
    const { fake, conn } = setup();
    expect(await conn.serverVersion()).toBe('2.00.076.00.1705400033');
    expect(fake.log).toEqual(['direct SELECT VERSION FROM SYS.M_DATABASE']);
  });

  it('answers undefined when the version cannot be read', async () => {
    const { fake, conn } = setup();
    fake.failExec.set('SELECT VERSION FROM SYS.M_DATABASE', hanaError('insufficient privilege', 258));
    expect(await conn.serverVersion()).toBeUndefined();
    expect(conn.broken).toBe(false);
  });

  it('closes once, never throws, and refuses work afterwards', async () => {
    const { fake, conn } = setup();
    await conn.close();
    await conn.close();
    expect(fake.log.filter((l) => l === 'disconnect')).toHaveLength(1);
    expect(conn.broken).toBe(true);
    expect((await rejection(conn.execute('SELECT 1 FROM DUMMY', [], READ))).code).toBe('INTERNAL');
  });

  it('the connection a driver makes holds no password: not in keys, JSON or inspection', async () => {
    const { conn } = await connected();
    expect(JSON.stringify(conn)).not.toContain(PASSWORD);
    expect(inspect(conn, { showHidden: true, depth: 5 })).not.toContain(PASSWORD);
  });
});

describe('HanaDriver.connect with the minimal client interface', () => {
  it('passes the password only in the connect call and turns autocommit on', async () => {
    const fake = new FakeConnection();
    const { target } = parseConnectionUrl('hana://SYSTEM@db:30013/HXE?encrypt=true');
    const driver = new HanaDriver(
      target,
      { password: PASSWORD },
      { connectTimeoutMs: 1500 },
      {
        loadClient: () => Promise.resolve({ createConnection: () => fake }),
      },
    );
    const conn = await driver.connect();
    expect(fake.connectOptions).toEqual({
      serverNode: 'db:30013',
      uid: 'SYSTEM',
      databaseName: 'HXE',
      encrypt: true,
      connectTimeout: 1500,
      communicationTimeout: 660_000,
      pwd: PASSWORD,
    });
    expect(driver.connectOptions).not.toHaveProperty('pwd');
    expect(fake.log).toEqual(['connect', 'autocommit true', 'clientInfo APPLICATION=hanactl']);
    await conn.close();
  });
});

describe('context parameters in the HANA session', () => {
  it('SETs the values as literals, and UNSETs them when the call ends, before the rollback', async () => {
    const { fake, conn } = setup();
    await conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, context: { CUSTOMER_ID: "7'; --" } });
    const context = fake.log.filter((l) => /'CUSTOMER_ID'/.test(l) && !l.includes('SESSION_CONTEXT'));
    expect(context).toEqual(["direct SET 'CUSTOMER_ID' = '7''; --'", "direct UNSET 'CUSTOMER_ID'"]);
    expect(fake.log.slice(-2)).toEqual(["direct UNSET 'CUSTOMER_ID'", 'rollback']);
    expect(fake.session.size).toBe(0);
    expect(conn.dirty).toBe(false);
    fake.log.length = 0;
    await conn.execute('SELECT 1 FROM DUMMY', [], READ);
    expect(fake.log.filter((l) => /SET 'CUSTOMER_ID'/.test(l))).toEqual([]);
    expect(fake.log).toContain(`direct SELECT SESSION_CONTEXT('CUSTOMER_ID') AS "CUSTOMER_ID" FROM DUMMY`);
  });

  it('gives the connection up when the values cannot be cleared at the end of the call', async () => {
    const { fake, conn } = setup();
    fake.failExec.set("UNSET 'CUSTOMER_ID'", hanaError('Connection lost', -10807));
    await conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, context: { CUSTOMER_ID: '7' } });
    expect(conn.broken).toBe(true);
    expect(conn.dirty).toBe(true);
  });

  it('reads the values back just before the statement, and does not run it when one differs', async () => {
    const { fake, conn } = setup();
    await conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, context: { CUSTOMER_ID: '7' } });
    const check = `direct SELECT SESSION_CONTEXT('CUSTOMER_ID') AS "CUSTOMER_ID" FROM DUMMY`;
    const first = fake.log.indexOf(check);
    expect(first).toBeGreaterThan(fake.log.indexOf("direct SET 'CUSTOMER_ID' = '7'"));
    expect(first).toBeLessThan(fake.log.indexOf('prepare SELECT 1 FROM DUMMY'));

    fake.overwrite = { CUSTOMER_ID: '8' };
    fake.log.length = 0;
    const err = await rejection(conn.execute('SELECT 2 FROM DUMMY', [], { ...READ, context: { CUSTOMER_ID: '7' } }));
    expect(err.code).toBe('CONTEXT_UNAVAILABLE');
    expect(err.message).toBe(
      'The context parameter CUSTOMER_ID did not read back as the value just set with session variables (SET / UNSET), so the statement did not run; an operator should check what in the database changes it (a trigger, a login hook, a proxy).',
    );
    expect(fake.log.filter((l) => l.startsWith('prepare'))).toEqual([]);
  });

  it('also refuses when a name this call leaves unset still reads back a value', async () => {
    const { fake, conn } = setup();
    await conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, context: { CUSTOMER_ID: '7' } });
    fake.overwrite = { CUSTOMER_ID: '7' };
    const err = await rejection(conn.execute('SELECT 1 FROM DUMMY', [], READ));
    expect(err.code).toBe('CONTEXT_UNAVAILABLE');
    expect(err.message).toMatch(/^The context parameter CUSTOMER_ID did not read back/);
  });

  it('says in one sentence for an operator when the database refuses to set them', async () => {
    const { fake, conn } = await connected();
    fake.failExec.set("SET 'CUSTOMER_ID' = '7'", hanaError(`insufficient privilege: Not authorized near "${PASSWORD}"`, 258));
    const err = await rejection(conn.execute('SELECT 1 FROM DUMMY', [], { ...READ, context: { CUSTOMER_ID: '7' } }));
    expect(err.code).toBe('CONTEXT_UNAVAILABLE');
    expect(err.message).toMatch(/refused to set this connection's context parameters .* an operator must grant/);
    // Context values are the caller's text: what HANA quotes of them is shown as it is.
    expect(err.message).toContain(`near "${PASSWORD}"`);
    expect(fake.log.filter((l) => l.startsWith('prepare'))).toEqual([]);
  });
});
