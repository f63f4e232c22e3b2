import { describe, expect, it } from 'vitest';
import { CatalogService, type StatementValidator } from '../../../../daemon/catalog/catalog-service.js';
import { likePattern, quoteWith, withoutTrailingSemicolons } from '../../../../daemon/catalog/catalog-sql.js';
import { HanaCatalog } from '../../../../daemon/engines/hana/hana-catalog.js';
import type { SessionExecutor } from '../../../../daemon/queries/query-service.js';
import type { Statement, StatementTarget } from '../../../../daemon/queries/statement.js';
import { ENGINES, type Engine } from '../../../../shared/connection-url.js';
import type { Param, QueryResult } from '../../../../shared/schemas.js';

describe('catalog SQL helpers', () => {
  it('turns an agent pattern into a bound, lower-cased LIKE pattern with ! escaped', () => {
    expect(likePattern('Order')).toBe('%order%');
    expect(likePattern('ORD%')).toBe('ord%');
    expect(likePattern('a_b')).toBe('%a_b%');
    expect(likePattern("x!%' OR 1=1")).toBe("x!!%' or 1=1");
  });

  it('quotes identifiers by doubling the delimiter and refuses NUL', () => {
    expect(quoteWith('"')('Odd"Name')).toBe('"Odd""Name"');
    expect(quoteWith('`')('a`; DROP TABLE t; --')).toBe('`a``; DROP TABLE t; --`');
    expect(() => quoteWith('"')('a\u0000b')).toThrow(/NUL/);
  });

  it('removes trailing semicolons and whitespace only', () => {
    expect(withoutTrailingSemicolons('SELECT ";" ;; \n')).toBe('SELECT ";"');
  });
});

/** A query service stand-in that records what would reach the database. */
function fakeQueries(engine: Engine) {
  const ran: { sql: string; params: readonly Param[] }[] = [];
  return {
    ran,
    queries: {
      engineOf: () => engine,
      separatesRows: () => false,
      runTrusted: async ({ sql, params = [] }: Omit<Statement, 'readOnly'>): Promise<QueryResult> => {
        ran.push({ sql, params });
        return { columns: [], rows: [], rowCount: 0, truncated: false, durationMs: 0 };
      },
    },
  };
}

const allow: StatementValidator = () => ({ ok: true, kind: 'read' });
/** The HANA catalog for every engine, so the connection's engine does not matter to these tests. */
const hana = Object.fromEntries(ENGINES.map((engine) => [engine, new HanaCatalog({ statementName: () => 'S1' })])) as Record<
  Engine,
  HanaCatalog
>;

describe('CatalogService.explain', () => {
  it('refuses what the validator refuses, naming rule and hint, before any statement', async () => {
    const { ran, queries } = fakeQueries('hana');
    const validate: StatementValidator = (_sql, engine) => ({
      ok: false,
      rule: 'write',
      message: `Refused on ${engine}.`,
      hint: 'Explain a SELECT.',
    });
    const service = new CatalogService({ queries, validate, catalogs: hana });
    await expect(service.explain({ connection: 'h', sql: 'DELETE FROM t' })).rejects.toMatchObject({
      code: 'STATEMENT_REFUSED',
      message: 'Refused on hana.',
      details: { rule: 'write', hint: 'Explain a SELECT.' },
    });
    expect(ran).toEqual([]);
  });

  it('refuses where rows are separated and the engine cannot leave the figures out, before any statement', async () => {
    const { ran, queries } = fakeQueries('hana');
    const service = new CatalogService({ queries: { ...queries, separatesRows: () => true }, validate: allow, catalogs: hana });
    await expect(service.explain({ connection: 'h', sql: 'SELECT 1 FROM DUMMY' })).rejects.toMatchObject({
      code: 'STATEMENT_REFUSED',
      details: { rule: 'planner-figures' },
    });
    expect(ran).toEqual([]);
  });

  it('refuses a statement the validator calls a write, even when it passes', async () => {
    const { queries } = fakeQueries('hana');
    const service = new CatalogService({ queries, validate: () => ({ ok: true, kind: 'write' }), catalogs: hana });
    await expect(service.explain({ connection: 'h', sql: 'UPDATE t SET a = 1' })).rejects.toMatchObject({ code: 'STATEMENT_REFUSED' });
  });

  it('says HANA explain needs a write scope when none is wired, and runs nothing', async () => {
    const { ran, queries } = fakeQueries('hana');
    const service = new CatalogService({ queries, validate: allow, catalogs: hana });
    await expect(service.explain({ connection: 'h', sql: 'SELECT 1 FROM DUMMY' })).rejects.toMatchObject({ code: 'DRIVER_UNAVAILABLE' });
    expect(ran).toEqual([]);
  });

  it('runs HANA explain on one writable connection, never on the read-only path, in the caller’s scope and under its signal', async () => {
    const { ran, queries } = fakeQueries('hana');
    const scoped: string[] = [];
    const targets: StatementTarget[] = [];
    const runTrustedWrites = async <T>(target: StatementTarget, work: (run: SessionExecutor) => Promise<T>): Promise<T> => {
      targets.push(target);
      return work(async (sql) => {
        scoped.push(`${target.connection}: ${sql.trim().split('\n')[0]}`);
        return [];
      });
    };
    const service = new CatalogService({ queries: { ...queries, runTrustedWrites }, validate: allow, catalogs: hana });
    const signal = new AbortController().signal;
    await service.explain({ connection: 'project:erp', project: '/work/shop', session: 's1', sql: 'SELECT 1 FROM DUMMY;  ' }, signal);
    expect(ran).toEqual([]);
    expect(scoped[0]).toBe("project:erp: EXPLAIN PLAN SET STATEMENT_NAME = 'S1' FOR SELECT 1 FROM DUMMY");
    expect(scoped.at(-1)).toBe('project:erp: DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ?');
    expect(targets).toEqual([{ connection: 'project:erp', scope: { project: '/work/shop', session: 's1' }, signal }]);
  });
});

describe('CatalogService table resolution', () => {
  it('refuses an ambiguous case-insensitive match, naming the candidates', async () => {
    const rows = [
      { SCHEMA_NAME: 'S', OBJECT_NAME: 'T', OBJECT_KIND: 'table', COMMENTS: null },
      { SCHEMA_NAME: 'S', OBJECT_NAME: 't', OBJECT_KIND: 'table', COMMENTS: null },
    ];
    const queries = {
      engineOf: (): Engine => 'hana',
      separatesRows: () => false,
      runTrusted: async (): Promise<QueryResult> => ({ columns: [], rows, rowCount: 2, truncated: false, durationMs: 0 }),
    };
    const service = new CatalogService({ queries, validate: allow, catalogs: hana });
    await expect(service.describe({ connection: 'h', schema: 'S', table: 'T ' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('"S.T", "S.t"'),
    });
  });
});
