import pg from 'pg';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { runDriverConformance } from './conformance.js';

const available = await serverAvailable('postgres');
const admin = new pg.Client({ connectionString: PG_URL });
if (available) await admin.connect();

if (available) {
  runDriverConformance({
    name: 'postgres',
    url: PG_URL,
    placeholder: (i) => `$${i}::text`,
    series: (n) => `SELECT g AS n FROM generate_series(1, ${n}) g`,
    endless: 'SELECT a AS n FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b',
    sleep: (s, m) => `SELECT pg_sleep(${s}) AS ${m}`,
    typesTable: (t) => ({
      setup: [
        `CREATE TABLE ${t} (i int, big bigint, huge bigint, dec numeric(30,10), f float8, b boolean, d date, ts timestamptz, bin bytea, txt text, nul text)`,
        `INSERT INTO ${t} VALUES (42, 9007199254740991, 9223372036854775807, 12345678901234567890.0123456789, 1.5, true, '2024-02-29', '2024-05-01 12:00:00+02', '\\x00ff', 'grüße 🐘', NULL)`,
      ],
      select: `SELECT * FROM ${t}`,
      expected: {
        i: 42,
        big: 9007199254740991,
        huge: '9223372036854775807',
        dec: '12345678901234567890.0123456789',
        f: 1.5,
        b: true,
        d: '2024-02-29',
        ts: '2024-05-01T10:00:00.000Z',
        bin: '\\x00ff',
        txt: 'grüße 🐘',
        nul: null,
      },
      teardown: `DROP TABLE IF EXISTS ${t}`,
    }),
    tempTable: (name) => ({ create: `CREATE TEMP TABLE ${name} (n int)`, name }),
    version: /^PostgreSQL \d+\.\d+/,
    readOnlyRefusal: { code: 'QUERY_FAILED', details: { sqlState: '25006' } },
    missingTable: { details: { sqlState: '42P01' } },
    twoStatements: { details: { sqlState: '42601' } },
    // The server says why it ended the session (57P01) before it closes the socket.
    lost: { code: 'QUERY_FAILED', details: { sqlState: '57P01' } },
    stopKeepsConnection: true,
    statementsRunning: async (m) =>
      (
        await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`,
          [`%${m}%`],
        )
      ).rows[0].n,
    sessionKiller: async (conn) => {
      const pid = (await conn.execute('SELECT pg_backend_pid() AS pid', [], { maxRows: 1, timeoutMs: 5000, readOnly: true })).rows[0]?.pid;
      // With a timeout, pg_terminate_backend waits until the backend has ended.
      return async () => {
        await admin.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
      };
    },
    cleanup: () => admin.end(),
  });
}
