import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HanaConnection } from '../../../../../daemon/engines/hana/hana-connection.js';
import { ServiceBroker } from '../../../../../daemon/mcp/service-broker.js';
import { tempFolders } from '../../../../helpers/temp-dir.js';
import { rejection } from './helpers.js';
import { recordedHanaDaemon } from './recorded-daemon.js';
import { RecordingConnection } from './recording-client.js';

/**
 * Curated tools on SAP HANA, at the @sap/hana-client boundary: the registered statement reaches
 * HANA with `?` markers and the values bound in placeholder order, inside the read-only
 * transaction, through the same QueryService.run as run_query. Golden file:
 * test/fixtures/hana-golden/curated-tool.txt (UPDATE_HANA_GOLDEN=1 rewrites it).
 */
const GOLDEN = join(import.meta.dirname, '../../../../fixtures/hana-golden/curated-tool.txt');
const client = new RecordingConnection();
const conn = new HanaConnection(client, { serverNode: 'db:443', communicationTimeoutMs: 10_000, cancelGraceMs: 1_000 });
const daemon = await recordedHanaDaemon(tempFolders('hanactl-curated-hana-').folder(), conn);
afterAll(() => daemon.close());

const SENT = "SELECT ID, TOTAL FROM ORDERS WHERE CUSTOMER = ? AND TOTAL >= ? AND NOTE <> ':kept' AND CUSTOMER <> ?";

describe('curated tools on SAP HANA, at the @sap/hana-client boundary', () => {
  const { curated, queries } = daemon;
  const broker = new ServiceBroker(daemon);

  it('binds each :name as ? in order and runs in the read-only transaction', async () => {
    await daemon.connections.add({ name: 'hdb', url: 'hana://DBADMIN@db.example.com:443/H00', password: 'pw' });
    await curated.import('hdb', {
      tools: [
        {
          name: 'orders_for_customer',
          description: 'Orders of one customer above a total.',
          sql: "SELECT ID, TOTAL FROM ORDERS WHERE CUSTOMER = :customer AND TOTAL >= :min_total AND NOTE <> ':kept' AND CUSTOMER <> :customer",
          parameters: [
            { name: 'customer', type: 'string' },
            { name: 'min_total', type: 'number' },
          ],
        },
      ],
    });
    client.rows[SENT] = { columns: ['ID', 'TOTAL'], values: [['1', '10.5']] };
    const result = await broker.callCurated({
      connection: 'hdb',
      tool: 'orders_for_customer',
      args: { customer: "o'brien", min_total: 10 },
    });
    expect(result.rowCount).toBe(1);
    const text = `${client.transcript.join('\n')}\n`;
    expect(text).toContain(`prepare ${SENT}`);
    expect(text).toContain('binds=["o\'brien",10,"o\'brien"]');
    if (process.env.UPDATE_HANA_GOLDEN === '1') writeFileSync(GOLDEN, text);
    expect(existsSync(GOLDEN), `${GOLDEN} is missing; run with UPDATE_HANA_GOLDEN=1 to write it`).toBe(true);
    expect(text).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it('refuses a write at import on a read-only HANA connection, with HANA’s statement policy', async () => {
    const err = await rejection(
      curated.import('hdb', {
        tools: [{ name: 'touch', description: 'Writes.', sql: 'UPDATE ORDERS SET NOTE = :n', parameters: [{ name: 'n', type: 'string' }] }],
      }),
    );
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.message).toMatch(/tools\[0\] "touch"\.sql: .*The connection is read-only/);
  });

  it('refuses free SQL on a curated-only HANA connection before anything reaches HANA', async () => {
    daemon.connections.update('hdb', { curatedOnly: true });
    const before = client.transcript.length;
    const err = await rejection(queries.run({ connection: 'hdb', sql: 'SELECT 1 FROM DUMMY' }));
    expect(err.code).toBe('FORBIDDEN');
    expect(client.transcript.length).toBe(before);
    const ok = await broker.callCurated({ connection: 'hdb', tool: 'orders_for_customer', args: { customer: 'x', min_total: 1 } });
    expect(ok.columns.map((c) => c.name)).toEqual(['ID', 'TOTAL']);
  });
});
