import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { DriverConnection } from '../../daemon/engines/driver.js';
import type { SqliteConnection } from '../../daemon/engines/sqlite/index.js';
import { processRunning } from '../helpers/processes.js';
import { runDriverConformance } from './conformance.js';

/** A fresh, empty SQLite file: the driver opens files that exist, never creates one. */
const dir = mkdtempSync(join(tmpdir(), 'hanactl-conformance-'));
const file = join(dir, 'conformance.db');
const Database = createRequire(import.meta.url)('better-sqlite3-multiple-ciphers') as new (path: string) => { close(): void };
new Database(file).close();

const pidOf = (conn: DriverConnection) => (conn as SqliteConnection).pid;

/** Statements never end on their own: SQLite has no sleep, so a recursive CTE without a bound stands in. */
const endlessCount = (m: string) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS ${m} FROM c`;

runDriverConformance({
  name: 'sqlite',
  url: `sqlite:${file}`,
  placeholder: () => '?',
  series: (n) => `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${n}) SELECT n FROM s`,
  endless: 'WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s) SELECT n FROM s',
  sleep: (_s, m) => endlessCount(m),
  typesTable: (t) => ({
    setup: [
      `CREATE TABLE ${t} (i INTEGER, big INTEGER, huge INTEGER, f REAL, b BOOLEAN, d TEXT, bin BLOB, txt TEXT, nul TEXT)`,
      `INSERT INTO ${t} VALUES (42, 9007199254740991, 9223372036854775807, 1.5, true, '2024-02-29', x'00ff', 'grüße 🪶', NULL)`,
    ],
    select: `SELECT * FROM ${t}`,
    expected: {
      i: 42,
      big: 9007199254740991,
      huge: '9223372036854775807',
      f: 1.5,
      b: 1, // SQLite has no boolean: TRUE is stored as 1
      d: '2024-02-29',
      bin: '\\x00ff',
      txt: 'grüße 🪶',
      nul: null,
    },
    teardown: `DROP TABLE IF EXISTS ${t}`,
  }),
  tempTable: (name) => ({ create: `CREATE TEMP TABLE ${name} (n INTEGER)`, name }),
  version: /^SQLite 3\.\d+\.\d+$/,
  readOnlyRefusal: { code: 'STATEMENT_REFUSED', details: { rule: 'engine-read-only' } },
  missingTable: { message: expect.stringMatching(/no such table: no_such_table_hanactl/), details: { nativeCode: 'SQLITE_ERROR' } },
  // The host is killed to stop a statement: there is no cancel inside SQLite that a runaway CTE always honours.
  stopKeepsConnection: false,
  hostProcess: pidOf,
  sessionKiller: async (conn) => {
    const pid = pidOf(conn);
    if (pid === undefined) throw new Error('the SQLite connection has no host process');
    return async () => {
      process.kill(pid, 'SIGKILL');
      const deadline = Date.now() + 5000;
      while (processRunning(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    };
  },
  lost: { code: 'QUERY_FAILED', message: expect.stringMatching(/SQLite worker process/) },
  cleanup: async () => rmSync(dir, { recursive: true, force: true }),
});
