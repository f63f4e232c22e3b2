import { describe, expect, it } from 'vitest';
import type { DriverConnection, ExecuteOptions } from '../../../../daemon/engines/driver.js';
import type { StatementReferences } from '../../../../daemon/policy/types.js';
import { type Checked, QueryService, type StatementPolicy } from '../../../../daemon/queries/query-service.js';
import { type ConnectionRecord, makeRecord } from '../../../../daemon/registry/connection-record.js';
import { HanactlError } from '../../../../shared/errors.js';
import type { Param } from '../../../../shared/schemas.js';

const REFERENCES: StatementReferences = { relations: ['"public"."orders"'], functions: ['customer_notes'] };

function record(fields: Partial<ConnectionRecord> = {}): ConnectionRecord {
  return makeRecord(
    {
      name: 'shop',
      target: { engine: 'postgres', scheme: 'postgres', database: 'shopdb', options: {} },
      allowWrite: false,
      context: [],
      createdAt: '2026-01-01T00:00:00Z',
      ...fields,
    },
    undefined,
  );
}

/** A query service over one record, a policy that answers `verdict` and a driver that records what it was asked to run. */
function service(rec: ConnectionRecord, verdict: Checked | Error = { kind: 'read', references: REFERENCES }) {
  const judged: { sql: string; options: Parameters<StatementPolicy['check']>[1] }[] = [];
  const ran: { sql: string; params: readonly Param[]; options: ExecuteOptions }[] = [];
  let borrows = 0;
  const connection = {
    execute: async (sql: string, params: readonly Param[], options: ExecuteOptions) => {
      ran.push({ sql, params, options });
      return { columns: [], rows: [{ plan: 'p' }], rowCount: 1, truncated: false };
    },
  } as unknown as DriverConnection;
  const queries = new QueryService({
    resolve: () => rec,
    poolFor: async () => ({
      pool: {
        use: async <T>(work: (c: DriverConnection) => Promise<T>) => {
          borrows++;
          return work(connection);
        },
      },
    }),
    policy: {
      check: (sql, options) => {
        judged.push({ sql, options });
        if (verdict instanceof Error) throw verdict;
        return verdict;
      },
    },
  });
  return { queries, judged, ran, borrows: () => borrows };
}

const explain = (run: (sql: string, params: readonly Param[], maxRows: number) => Promise<unknown>, sql: string) =>
  run(`EXPLAIN ${sql}`, [], 1);

describe('QueryService.checkedRead: text the agent chose, outside run_query', () => {
  it("is judged with the options run_query's text gets on the connection, as a read", async () => {
    const rec = record({ context: ['CUSTOMER_ID'] });
    const { queries, judged } = service(rec);
    const context = { CUSTOMER_ID: '1' };
    await queries.checkedRead({ connection: 'shop', sql: 'SELECT 1', what: 'free SQL (explain_query)', context }, explain);
    await queries.run({ connection: 'shop', sql: 'SELECT 1', context });
    expect(judged).toHaveLength(2);
    expect(judged[0]?.options).toEqual({
      dialect: 'postgres',
      allowWrite: false,
      database: 'shopdb',
      unsignedContext: true,
      rowSeparation: true,
    });
    expect(judged[0]?.options).toEqual(judged[1]?.options);
  });

  it("sends the statements read-only, each carrying what the text names, so the server's resolve step runs first", async () => {
    const { queries, ran } = service(record());
    const signal = new AbortController().signal;
    await queries.checkedRead(
      { connection: 'shop', sql: 'SELECT customer_notes(2)', what: 'free SQL (explain_query)', signal, context: {} },
      explain,
    );
    expect(ran).toHaveLength(1);
    expect(ran[0]?.sql).toBe('EXPLAIN SELECT customer_notes(2)');
    expect(ran[0]?.options).toMatchObject({ readOnly: true, references: REFERENCES, signal });
  });

  it('refuses before any borrow what the policy refuses, a write, and any text on a curated-only connection', async () => {
    const refusal = new HanactlError('STATEMENT_REFUSED', 'Refused: no.', { rule: 'denied-function', hint: 'h' });
    for (const [rec, verdict, code] of [
      [record(), refusal, 'STATEMENT_REFUSED'],
      [record({ allowWrite: true }), { kind: 'write' }, 'STATEMENT_REFUSED'],
      [record({ curatedOnly: true }), { kind: 'read' }, 'FORBIDDEN'],
    ] as const) {
      const { queries, ran, borrows } = service(rec, verdict);
      await expect(
        queries.checkedRead({ connection: 'shop', sql: 'DELETE FROM t', what: 'free SQL (explain_query)' }, explain),
      ).rejects.toMatchObject({
        code,
      });
      expect(ran).toEqual([]);
      expect(borrows()).toBe(0);
    }
  });

  it('with `writes`, runs every statement on one borrowed connection, still after the check', async () => {
    const { queries, judged, ran, borrows } = service(record({ target: { engine: 'hana', scheme: 'hana', options: {} } }), {
      kind: 'read',
    });
    await queries.checkedRead(
      { connection: 'shop', sql: 'SELECT 1 FROM DUMMY', what: 'free SQL (explain_query)', writes: true },
      async (run, sql) => {
        await run(`EXPLAIN PLAN FOR ${sql}`, [], 1);
        return run('DELETE FROM EXPLAIN_PLAN_TABLE', [], 1);
      },
    );
    expect(judged.map((j) => j.sql)).toEqual(['SELECT 1 FROM DUMMY']);
    expect(ran.map((r) => r.sql)).toEqual(['EXPLAIN PLAN FOR SELECT 1 FROM DUMMY', 'DELETE FROM EXPLAIN_PLAN_TABLE']);
    expect(ran.every((r) => r.options.readOnly === false)).toBe(true);
    expect(borrows()).toBe(1);
  });
});
