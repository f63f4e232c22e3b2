import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogExecutor } from '../../../../../daemon/catalog/catalog.js';
import type { ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import { HanaCatalog } from '../../../../../daemon/engines/hana/hana-catalog.js';
import { HanaConnection } from '../../../../../daemon/engines/hana/hana-connection.js';
import { HanaDriver } from '../../../../../daemon/engines/hana/hana-driver.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { rejection } from './helpers.js';
import { RecordingConnection } from './recording-client.js';

/**
 * Golden transcripts: what the driver sends to @sap/hana-client on each path (SQL, binds,
 * options, timeouts), compared exactly with test/fixtures/hana-golden/<path>.txt, so any change
 * to what reaches SAP HANA shows in review. To change them on purpose:
 *   UPDATE_HANA_GOLDEN=1 npx vitest run test/unit/daemon/engines/hana/golden.test.ts
 * then read the diff of test/fixtures/hana-golden/ before committing it.
 */
const GOLDEN = join(import.meta.dirname, '../../../../fixtures/hana-golden');

function matchesGolden(path: string, transcript: readonly string[]): void {
  const file = join(GOLDEN, `${path}.txt`);
  const text = `${transcript.join('\n')}\n`;
  if (process.env.UPDATE_HANA_GOLDEN === '1') writeFileSync(file, text);
  expect(existsSync(file), `${file} is missing; run with UPDATE_HANA_GOLDEN=1 to write it`).toBe(true);
  expect(text).toBe(readFileSync(file, 'utf8'));
}

const READ: ExecuteOptions = { maxRows: 100, timeoutMs: 5_000, readOnly: true };
const WRITE: ExecuteOptions = { maxRows: 100, timeoutMs: 5_000, readOnly: false };

function setup(): { client: RecordingConnection; conn: HanaConnection } {
  const client = new RecordingConnection();
  const conn = new HanaConnection(client, { serverNode: 'db:443', communicationTimeoutMs: 10_000, cancelGraceMs: 1_000 });
  return { client, conn };
}

describe('golden transcripts at the @sap/hana-client boundary', () => {
  it('connect', async () => {
    const client = new RecordingConnection();
    const { target } = parseConnectionUrl('hana://DBADMIN@abc.hana.prod-eu10.hanacloud.ondemand.com/H00');
    const driver = new HanaDriver(
      target,
      { password: 'pw' },
      { connectTimeoutMs: 10_000 },
      {
        loadClient: () => Promise.resolve({ createConnection: () => client }),
      },
    );
    await (await driver.connect()).close();
    matchesGolden('connect', client.transcript);
  });

  it('a read with context values', async () => {
    const { client, conn } = setup();
    client.rows['SELECT ID FROM ORDERS WHERE CUSTOMER = SESSION_CONTEXT(?)'] = { columns: ['ID'], values: [['1'], ['2']] };
    await conn.execute('SELECT ID FROM ORDERS WHERE CUSTOMER = SESSION_CONTEXT(?)', ['CUSTOMER_ID'], {
      ...READ,
      maxRows: 1,
      context: { CUSTOMER_ID: "o'brien", REGION: 'EMEA' },
    });
    matchesGolden('read-with-context', client.transcript);
  });

  it('a write after a read', async () => {
    const { client, conn } = setup();
    await conn.execute('SELECT 1 AS ONE FROM DUMMY', [], READ);
    await conn.execute('UPDATE T SET A = ? WHERE B = ?', ['x', 2], WRITE);
    matchesGolden('write-after-read', client.transcript);
  });

  it('a timeout', async () => {
    const { client, conn } = setup();
    client.hang = /SERIES_GENERATE/;
    const err = await rejection(
      conn.execute('SELECT COUNT(*) FROM SERIES_GENERATE_INTEGER(1, 0, 1000000000)', [], { ...READ, timeoutMs: 50 }),
    );
    expect(err.code).toBe('QUERY_TIMEOUT');
    matchesGolden('timeout', client.transcript);
  });

  it('an abort', async () => {
    const { client, conn } = setup();
    client.hang = /SERIES_GENERATE/;
    const controller = new AbortController();
    const running = rejection(
      conn.execute('SELECT COUNT(*) FROM SERIES_GENERATE_INTEGER(1, 0, 1000000000)', [], { ...READ, signal: controller.signal }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    while (!client.transcript.some((l) => l.startsWith('statement.execQuery'))) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect((await running).code).toBe('QUERY_CANCELLED');
    matchesGolden('abort', client.transcript);
  });

  const catalog = new HanaCatalog({ statementName: () => 'HANACTL_GOLDEN' });
  const tools: [string, (run: CatalogExecutor) => Promise<unknown>][] = [
    ['catalog-current-schema', (run) => catalog.currentSchema(run)],
    ['catalog-list-schemas', (run) => catalog.listSchemas(run, { pattern: 'APP%', limit: 50 })],
    ['catalog-list-tables', (run) => catalog.listTables(run, { schema: 'APP', pattern: 'ORD%', limit: 50 })],
    ['catalog-find-tables', (run) => catalog.findTables(run, 'APP', 'orders')],
    ['catalog-describe-table', (run) => catalog.describeTable(run, { schema: 'APP', table: 'ORDERS', kind: 'TABLE', comment: null })],
    ['catalog-list-routines', (run) => catalog.listRoutines(run, { schema: 'APP', limit: 50 })],
    ['catalog-search', (run) => catalog.search(run, { pattern: 'order', kinds: ['table', 'view', 'column', 'routine'], limit: 20 })],
    [
      'catalog-sample-rows',
      async (run) => {
        const s = catalog.sampleStatement({ schema: 'APP', table: 'ORDERS', kind: 'TABLE', comment: null }, 5);
        return run(s.sql, s.params, 5);
      },
    ],
    ['explain', (run) => catalog.explain(run, 'SELECT * FROM APP.ORDERS WHERE ID = 1')],
  ];
  it.each(tools)('%s', async (name, tool) => {
    const { client, conn } = setup();
    const readOnly = name !== 'explain';
    const run: CatalogExecutor = async (sql, params, maxRows) =>
      (await conn.execute(sql, params, { ...READ, readOnly, maxRows, timeoutMs: 10_000 })).rows;
    await tool(run);
    matchesGolden(name, client.transcript);
  });
});
