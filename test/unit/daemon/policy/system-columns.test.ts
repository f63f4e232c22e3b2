/**
 * PostgreSQL's system columns ctid, xmin, xmax, cmin and cmax, and TABLESAMPLE, are physical or
 * transaction coordinates every row shares with the rows a policy hides: where rows are separated,
 * `SELECT id, ctid FROM orders` shows (0,3), (0,6) ... (two hidden tuples between each of the
 * caller's rows). Every form the server reads as such a column is refused there by BOTH checks,
 * each on its own; elsewhere they answer.
 */
import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { postgresSystemColumnRule } from '../../../../daemon/policy/system-columns.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const plain: PolicyOptions = { dialect: 'postgres', allowWrite: false };
const separated: PolicyOptions = { ...plain, rowSeparation: true };

const tokensAlone = (sql: string) => postgresSystemColumnRule(lex(sql, DIALECTS.postgres.syntax).tokens);
const parserAlone = (sql: string, options = separated) =>
  postgresParserObjection(sql, options, 'read', (inner) => checkStatement(inner, options));

describe('system columns where rows are separated', () => {
  test.each([
    ['SELECT id, ctid FROM orders', 'ctid'],
    ['SELECT max(ctid) FROM orders', 'ctid'],
    ['SELECT (ctid::text::point)[1] FROM orders', 'ctid'],
    ['SELECT id FROM orders ORDER BY ctid', 'ctid'],
    ['SELECT id FROM orders WHERE ctid > \'(0,1)\'', 'ctid'],
    ['SELECT o.ctid FROM orders o', 'ctid'],
    ['SELECT public.orders.ctid FROM public.orders', 'ctid'],
    ['SELECT (o).ctid FROM orders o', 'ctid'],
    ['SELECT (o.*).xmin FROM orders o', 'xmin'],
    ['SELECT ctid(o) FROM orders o', 'ctid'],
    ['SELECT xmax(orders) FROM orders', 'xmax'],
    ['SELECT "ctid" FROM orders', 'ctid'],
    ['SELECT xmin FROM orders', 'xmin'],
    ['SELECT xmin::text::bigint FROM orders', 'xmin'],
    ['SELECT cmin FROM orders', 'cmin'],
    ['SELECT o.cmax FROM orders AS o', 'cmax'],
    ['SELECT count(*) FROM orders GROUP BY xmax', 'xmax'],
    ['SELECT id FROM orders WHERE id IN (SELECT id FROM orders ORDER BY ctid LIMIT 1)', 'ctid'],
    ['WITH c AS (SELECT ctid AS p FROM orders) SELECT p FROM c', 'ctid'],
    ['SELECT (SELECT max(xmin::text::int) FROM orders)', 'xmin'],
    ['SELECT count(*) FROM orders TABLESAMPLE SYSTEM (50)', 'TABLESAMPLE'],
    ['SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (50) REPEATABLE (1)', 'TABLESAMPLE'],
    ['SELECT * FROM (SELECT id FROM orders o TABLESAMPLE system (10)) s', 'TABLESAMPLE'],
  ])('%s is refused by each check, naming %s', (sql, named) => {
    for (const [layer, verdict] of [
      ['whole', checkStatement(sql, separated)],
      ['tokens', tokensAlone(sql)],
      ['parser', parserAlone(sql)],
    ] as const) {
      expect(verdict, `${layer}: ${sql}`).toMatchObject({ ok: false, rule: 'system-column' });
      if (verdict && !verdict.ok) {
        expect(verdict.message, `${layer}: ${sql}`).toContain(named);
        expect(verdict.message).toMatch(/table's own key/);
      }
    }
    expect(checkStatement(sql, plain), `plain: ${sql}`).toMatchObject({ ok: true });
    expect(parserAlone(sql, plain), `plain parser: ${sql}`).toBeUndefined();
  });

  test('a name written with escapes, which may spell a system column, is refused by each check', () => {
    const sql = 'SELECT U&"\\0063tid" FROM orders';
    expect(checkStatement(sql, separated)).toMatchObject({ ok: false, rule: 'system-column' });
    expect(tokensAlone(sql)).toMatchObject({ ok: false, rule: 'system-column' });
    expect(parserAlone(sql)).toMatchObject({ ok: false, rule: 'system-column' });
  });

  test.each([
    'SELECT id, tableoid::regclass FROM orders',
    'SELECT id FROM orders ORDER BY id',
    'SELECT "CTID" FROM orders',
    'SELECT backend_xmin IS NULL FROM pg_stat_replication_slots_x',
    "SELECT count(*) FROM orders WHERE item = 'ctid'",
  ])('%s still answers', (sql) => {
    expect(tokensAlone(sql), sql).toBeUndefined();
    expect(parserAlone(sql), sql).toBeUndefined();
  });
});
