import { describe, expect, it } from 'vitest';
import { CatalogService, type StatementValidator } from '../../../../daemon/catalog/catalog-service.js';
import { likePattern, quoteWith, withoutTrailingSemicolons } from '../../../../daemon/catalog/catalog-sql.js';
import { HanaCatalog } from '../../../../daemon/engines/hana/hana-catalog.js';
import type { CheckedExecutor, CheckedRead } from '../../../../daemon/queries/query-service.js';
import type { Statement } from '../../../../daemon/queries/statement.js';
import { ENGINES, type Engine } from '../../../../shared/connection-url.js';
import { HanactlError } from '../../../../shared/errors.js';
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

/** A query service stand-in that records what would reach the database: by the trusted path, and by checked reads. */
function fakeQueries(engine: Engine) {
  const ran: { sql: string; params: readonly Param[] }[] = [];
  const checked: CheckedRead[] = [];
  const scoped: string[] = [];
  const result = (): QueryResult => ({ columns: [], rows: [], rowCount: 0, truncated: false, durationMs: 0 });
  return {
    ran,
    checked,
    scoped,
    queries: {
      engineOf: () => engine,
      separatesRows: () => false,
      runTrusted: async ({ sql, params = [] }: Omit<Statement, 'readOnly'>): Promise<QueryResult> => {
        ran.push({ sql, params });
        return result();
      },
      checkedRead: async <T>(request: CheckedRead, work: (run: CheckedExecutor, sql: string) => Promise<T>): Promise<T> => {
        checked.push(request);
        return work(async (sql) => {
          scoped.push(sql.trim().split('\n')[0] as string);
          return result();
        }, request.sql);
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
  it('refuses where rows are separated and the engine cannot leave the figures out, before any statement', async () => {
    const { ran, checked, queries } = fakeQueries('hana');
    const service = new CatalogService({ queries: { ...queries, separatesRows: () => true }, validate: allow, catalogs: hana });
    await expect(service.explain({ connection: 'h', sql: 'SELECT 1 FROM DUMMY' })).rejects.toMatchObject({
      code: 'STATEMENT_REFUSED',
      details: { rule: 'planner-figures' },
    });
    expect(ran).toEqual([]);
    expect(checked).toEqual([]);
  });

  it('sends the statement only through the checked read, never the trusted path: a refusal there runs nothing', async () => {
    const { ran, queries } = fakeQueries('hana');
    const refused = new HanactlError('STATEMENT_REFUSED', 'Refused on hana.', { rule: 'write', hint: 'Explain a SELECT.' });
    const service = new CatalogService({
      queries: { ...queries, checkedRead: async () => Promise.reject(refused) },
      validate: allow,
      catalogs: hana,
    });
    await expect(service.explain({ connection: 'h', sql: 'DELETE FROM t' })).rejects.toBe(refused);
    expect(ran).toEqual([]);
  });

  it('runs HANA explain as a checked read that writes, in the caller’s scope and under its signal, the text without its trailing semicolons', async () => {
    const { ran, checked, scoped, queries } = fakeQueries('hana');
    const service = new CatalogService({ queries, validate: allow, catalogs: hana });
    const signal = new AbortController().signal;
    await service.explain({ connection: 'project:erp', project: '/work/shop', session: 's1', sql: 'SELECT 1 FROM DUMMY;  ' }, signal);
    expect(ran).toEqual([]);
    expect(scoped[0]).toBe("EXPLAIN PLAN SET STATEMENT_NAME = 'S1' FOR SELECT 1 FROM DUMMY");
    expect(scoped.at(-1)).toBe('DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ?');
    expect(checked).toEqual([
      {
        connection: 'project:erp',
        scope: { project: '/work/shop', session: 's1' },
        signal,
        sql: 'SELECT 1 FROM DUMMY',
        what: 'free SQL (explain_query)',
        context: undefined,
        writes: true,
      },
    ]);
  });
});

describe('CatalogService table resolution', () => {
  it('refuses an ambiguous case-insensitive match, naming the candidates', async () => {
    const rows = [
      { SCHEMA_NAME: 'S', OBJECT_NAME: 'T', OBJECT_KIND: 'table', COMMENTS: null },
      { SCHEMA_NAME: 'S', OBJECT_NAME: 't', OBJECT_KIND: 'table', COMMENTS: null },
    ];
    const queries = {
      ...fakeQueries('hana').queries,
      runTrusted: async (): Promise<QueryResult> => ({ columns: [], rows, rowCount: 2, truncated: false, durationMs: 0 }),
    };
    const service = new CatalogService({ queries, validate: allow, catalogs: hana });
    await expect(service.describe({ connection: 'h', schema: 'S', table: 'T ' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('"S.T", "S.t"'),
    });
  });
});
