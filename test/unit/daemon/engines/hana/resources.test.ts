import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HanaConnection } from '../../../../../daemon/engines/hana/hana-connection.js';
import { ServiceBroker } from '../../../../../daemon/mcp/service-broker.js';
import { createShimServer } from '../../../../../shim/server.js';
import { tempFolders } from '../../../../helpers/temp-dir.js';
import { recordedHanaDaemon } from './recorded-daemon.js';
import { RecordingConnection } from './recording-client.js';

/**
 * Tables as MCP resources on SAP HANA, at the @sap/hana-client boundary: the SDK's Client drives
 * the session's MCP server (the one the daemon runs for a relay) over the daemon's real catalog,
 * query service and HANA driver; a recording client stands in for @sap/hana-client and answers
 * the catalog's statements with rows shaped as HANA returns them (upper-case labels, counts as
 * strings). The live catalog run is test/integration/catalog/hana.test.ts.
 */
type Answer = { columns: string[]; values: unknown[][] };
const ANSWERS: [RegExp, Answer][] = [
  [/CURRENT_SCHEMA AS SCHEMA_NAME FROM DUMMY/, { columns: ['SCHEMA_NAME'], values: [['SALES']] }],
  [/FROM SYS\.SCHEMAS/, { columns: ['SCHEMA_NAME', 'TOTAL'], values: [['SALES', '1']] }],
  [
    /OBJECT_NAME, OBJECT_KIND, RECORD_COUNT/,
    {
      columns: ['OBJECT_NAME', 'OBJECT_KIND', 'RECORD_COUNT', 'COMMENTS', 'TOTAL'],
      values: [
        ['ORDERS', 'table', '1234567', 'Customer orders', '2'],
        ['V_OPEN', 'view', null, null, '2'],
      ],
    },
  ],
  [
    /TABLE_NAME AS OBJECT_NAME, 'table' AS OBJECT_KIND, COMMENTS FROM SYS\.TABLES/,
    { columns: ['SCHEMA_NAME', 'OBJECT_NAME', 'OBJECT_KIND', 'COMMENTS'], values: [['SALES', 'ORDERS', 'table', 'Customer orders']] },
  ],
  [
    /FROM SYS\.TABLE_COLUMNS/,
    {
      columns: ['COLUMN_NAME', 'DATA_TYPE_NAME', 'LENGTH', 'SCALE', 'IS_NULLABLE', 'DEFAULT_VALUE', 'COMMENTS', 'POSITION'],
      values: [
        ['ID', 'INTEGER', '10', '0', 'FALSE', null, null, '1'],
        ['CUSTOMER_ID', 'INTEGER', '10', '0', 'FALSE', null, null, '2'],
        ['TOTAL', 'DECIMAL', '10', '2', 'TRUE', '0', null, '3'],
      ],
    },
  ],
  [/IS_PRIMARY_KEY = 'TRUE'/, { columns: ['COLUMN_NAME'], values: [['ID']] }],
  [
    /FROM SYS\.REFERENTIAL_CONSTRAINTS/,
    {
      columns: ['CONSTRAINT_NAME', 'COLUMN_NAME', 'REFERENCED_SCHEMA_NAME', 'REFERENCED_TABLE_NAME', 'REFERENCED_COLUMN_NAME'],
      values: [['FK_ORDERS_CUSTOMER', 'CUSTOMER_ID', 'SALES', 'CUSTOMERS', 'ID']],
    },
  ],
];

const hana = new RecordingConnection();
hana.rows = new Proxy({} as Record<string, Answer>, {
  get: (_target, sql) => (typeof sql === 'string' ? ANSWERS.find(([re]) => re.test(sql))?.[1] : undefined),
});
const conn = new HanaConnection(hana, { serverNode: 'db:443', communicationTimeoutMs: 10_000, cancelGraceMs: 1_000 });
const daemon = await recordedHanaDaemon(tempFolders('hanactl-resources-hana-').folder(), conn);
const broker = new ServiceBroker(daemon);
const client = new Client({ name: 'hana-resources', version: '1' });

beforeAll(async () => {
  await daemon.connections.add({ name: 'hdb', url: 'hana://DBADMIN@db.example.com:443/H00', password: 'pw' });
  const { server } = createShimServer(broker, { connection: 'hdb' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
});
afterAll(async () => {
  await client.close();
  await daemon.close();
});

describe('tables as MCP resources on SAP HANA, at the @sap/hana-client boundary', () => {
  it('lists the schema’s tables and views under hanactl://hdb/SALES/<table>', async () => {
    const { resources } = await client.listResources();
    expect(resources).toEqual([
      {
        uri: 'hanactl://hdb/SALES/ORDERS',
        name: 'SALES.ORDERS',
        description: 'table, ~1234567 rows: Customer orders',
        mimeType: 'text/plain',
      },
      { uri: 'hanactl://hdb/SALES/V_OPEN', name: 'SALES.V_OPEN', description: 'view', mimeType: 'text/plain' },
    ]);
  });

  it('reads a table: columns with HANA types, keys and RECORD_COUNT as the estimate, each statement read-only and rolled back', async () => {
    const before = hana.transcript.length;
    const { contents } = await client.readResource({ uri: 'hanactl://hdb/SALES/ORDERS' });
    const text = contents.map((c) => ('text' in c ? c.text : '')).join('\n');
    expect(text).toContain('SALES.ORDERS (table) on connection "hdb": 3 columns, about 1234567 rows (estimate).');
    expect(text).toMatch(/TOTAL\s+\| DECIMAL\(10,2\)\s+\| yes\s+\| 0/);
    expect(text).toContain('Primary key: (ID)');
    expect(text).toContain('Foreign key FK_ORDERS_CUSTOMER: (CUSTOMER_ID) -> SALES.CUSTOMERS (ID)');
    const sent = hana.transcript.slice(before);
    const prepared = sent.filter((l) => l.startsWith('prepare '));
    expect(prepared.length).toBeGreaterThanOrEqual(4);
    // Every catalog statement ran in its own read-only transaction, rolled back, names bound.
    expect(sent.filter((l) => l === 'exec SET TRANSACTION READ ONLY binds=[]').length).toBe(prepared.length);
    expect(sent.filter((l) => l === 'rollback').length).toBe(prepared.length);
    expect(sent.some((l) => l.includes('binds=["SALES","ORDERS"]'))).toBe(true);
    expect(prepared.join('\n')).not.toContain("'ORDERS'");
  });

  it('completes table names from the current schema', async () => {
    const { completion } = await client.complete({
      ref: { type: 'ref/resource', uri: 'hanactl://{connection}/{schema}/{table}' },
      argument: { name: 'table', value: 'ORD' },
      context: { arguments: { connection: 'hdb', schema: 'SALES' } },
    });
    expect(completion.values).toContain('ORDERS');
    const last = hana.transcript.filter((l) => l.startsWith('statement.execQuery')).at(-1);
    expect(last).toContain('"ord%"');
  });
});
