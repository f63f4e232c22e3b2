import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HanaConnection } from '../../../../../daemon/engines/hana/hana-connection.js';
import { PLAN_COST_SQL } from '../../../../../daemon/engines/hana/hana-sql.js';
import { tempFolders } from '../../../../helpers/temp-dir.js';
import { rejection } from './helpers.js';
import { recordedHanaDaemon } from './recorded-daemon.js';
import { RecordingConnection } from './recording-client.js';

/**
 * The cost guard on SAP HANA, at the @sap/hana-client boundary: EXPLAIN PLAN of the statement
 * with its binds (autocommit, before the read-only transaction), the plan's cost read and its
 * rows deleted, then the statement — or, over the limit, a refusal and no statement at all.
 */
const client = new RecordingConnection();
const conn = new HanaConnection(client, { serverNode: 'db:443', communicationTimeoutMs: 10_000, cancelGraceMs: 1_000 });
const daemon = await recordedHanaDaemon(tempFolders('hanactl-cost-hana-').folder(), conn);
const { queries } = daemon;
afterAll(() => daemon.close());

const SQL = 'SELECT ID FROM ORDERS WHERE CUSTOMER = ?';
const PLAN_NAME = /HANACTL_COST_[0-9A-F]{16}/;

describe('the cost guard on SAP HANA, at the @sap/hana-client boundary', () => {
  /** The transcript of one call, the random plan name shown as <plan>. */
  const call = async (run: () => Promise<unknown>): Promise<{ lines: string[]; outcome: unknown }> => {
    client.transcript.length = 0;
    const outcome = await run().catch((err: unknown) => err);
    return { lines: client.transcript.map((l) => l.replace(PLAN_NAME, '<plan>')), outcome };
  };

  beforeAll(async () => {
    await daemon.connections.add({ name: 'hdb', url: 'hana://DBADMIN@db.example.com:443/H00', password: 'pw' });
    daemon.connections.update('hdb', { maxCost: 1000 });
    client.rows[SQL] = { columns: ['ID'], values: [['1']] };
  });

  it('plans first with the same binds, reads the cost, deletes the plan, then runs the read in its read-only transaction', async () => {
    client.execRows[PLAN_COST_SQL] = [{ COST: 12.5 }];
    const { lines, outcome } = await call(() => queries.run({ connection: 'hdb', sql: SQL, params: ['c7'] }));
    expect(outcome).toMatchObject({ rowCount: 1, rows: [{ ID: '1' }] });
    expect(lines.slice(0, 9)).toEqual([
      'setAutoCommit true',
      `exec EXPLAIN PLAN SET STATEMENT_NAME = '<plan>' FOR ${SQL} binds=["c7"]`,
      `exec ${PLAN_COST_SQL} binds=["<plan>"]`,
      'exec DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ? binds=["<plan>"]',
      'setAutoCommit false',
      'exec SET TRANSACTION READ ONLY binds=[]',
      `prepare ${SQL}`,
      // The default statement timeout (30 s), in whole seconds with one to spare.
      'statement.setTimeout 31',
      expect.stringMatching(/^statement\.execQuery binds=\["c7"\]/),
    ]);
  });

  it('refuses a read whose plan costs more than the limit, naming both; the statement is never prepared', async () => {
    client.execRows[PLAN_COST_SQL] = [{ COST: '250000.75' }];
    const { lines, outcome } = await call(() => queries.run({ connection: 'hdb', sql: SQL, params: ['c7'] }));
    const err = outcome as Error & { code: string };
    expect(err.code).toBe('STATEMENT_REFUSED');
    expect(err.message).toMatch(/estimates this statement at cost 250000\.75, over the limit of 1000 set for "hdb"\. It was not run\./);
    expect(err.message).toMatch(/set hdb --max-cost <n>/);
    expect(lines).toContain('exec DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ? binds=["<plan>"]');
    expect(lines.some((l) => l.startsWith(`prepare ${SQL}`))).toBe(false);
    expect(lines.at(-1)).toBe('rollback');
  });

  it('refuses when the plan table holds no cost (the limit cannot be held), and deletes the plan', async () => {
    client.execRows[PLAN_COST_SQL] = [{ COST: null }];
    const err = await rejection(queries.run({ connection: 'hdb', sql: SQL, params: ['c7'] }));
    expect(err.message).toMatch(/"hdb" has a cost limit of 1000, but the SAP HANA plan carried no cost\./);
    expect(client.transcript.some((l) => l.startsWith(`prepare ${SQL}`))).toBe(false);
  });

  it('plans nothing once a person cleared the limit', async () => {
    daemon.connections.update('hdb', { maxCost: null });
    const { lines } = await call(() => queries.run({ connection: 'hdb', sql: SQL, params: ['c7'] }));
    expect(lines.some((l) => l.includes('EXPLAIN'))).toBe(false);
    expect(lines).toContain(`prepare ${SQL}`);
  });
});
