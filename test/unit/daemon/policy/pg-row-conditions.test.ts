import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/check-statement.js';
import { parsePostgres } from '../../../../daemon/policy/pg-parser.js';

/** The sites of `sql` as `shown` -> names, and the opaque form (but those read with columns taken as views'). */
function sites(sql: string) {
  const parsed = parsePostgres(sql);
  if (!parsed.ok) throw new Error(parsed.message);
  return {
    sites: parsed.conditions
      .filter((site) => !site.views)
      .map((site) => ({
        shown: site.shown,
        names: [...site.functions, ...site.operators, ...site.types.map((type) => `::${type}`)].sort(),
        constant: site.constant,
        numeric: site.numeric,
      })),
    opaque: parsed.opaqueCondition,
  };
}

/** Each site's `shown` once (a subquery's condition is read twice: its unqualified names as outer, then as its own). */
const shownOf = (sql: string): string[] => [...new Set(sites(sql).sites.map((site) => site.shown))];

const HTP = "has_table_privilege('nope', 'select')";

describe('calls in conditions on no column of the row (pg-row-conditions)', () => {
  it.each([
    [`SELECT id FROM t WHERE CASE WHEN note = 'x' THEN ${HTP} ELSE true END`, 'has_table_privilege()'],
    [`SELECT id FROM t WHERE note <> 'x' OR ${HTP}`, 'has_table_privilege()'],
    [`SELECT id FROM t WHERE note = 'x' AND ${HTP}`, 'has_table_privilege()'],
    [`SELECT id FROM t a JOIN u b ON a.id = b.id AND ${HTP}`, 'has_table_privilege()'],
    [`SELECT id FROM t GROUP BY id HAVING ${HTP}`, 'has_table_privilege()'],
    [`SELECT * FROM (SELECT id FROM t WHERE ${HTP}) s`, 'has_table_privilege()'],
    [`WITH c AS (SELECT id FROM t WHERE ${HTP}) SELECT * FROM c`, 'has_table_privilege()'],
    [`SELECT 1 WHERE EXISTS (SELECT FROM t WHERE ${HTP})`, 'has_table_privilege()'],
    [`SELECT * FROM u, LATERAL (SELECT FROM t WHERE ${HTP}) l`, 'has_table_privilege()'],
    [`SELECT * FROM (SELECT id, ${HTP} AS ok FROM t) s WHERE s.ok`, 'has_table_privilege()'],
    ["SELECT id FROM t WHERE CASE WHEN note = 'x' THEN current_setting('nope') = '' END", 'operator ='],
    ["SELECT id FROM t WHERE CASE WHEN note = 'x' THEN 'nope'::text::regclass IS NULL END", 'cast to regclass'],
    ["SELECT id FROM t WHERE CASE WHEN c = 2 THEN nextval('s') < 0 ELSE true END", 'operator <'],
    ["SELECT id FROM t WHERE placed > now() - interval '1 day'", 'operator -'],
    [`UPDATE t SET x = 1 WHERE CASE WHEN note = 'x' THEN ${HTP} END`, 'has_table_privilege()'],
    [`DELETE FROM t WHERE CASE WHEN note = 'x' THEN ${HTP} END`, 'has_table_privilege()'],
    ["SELECT id FROM t WHERE CASE note WHEN 'x' THEN current_setting('nope') = '' END", 'operator ='],
    [`SELECT id FROM t WHERE CASE WHEN note = 'x' THEN (SELECT ${HTP}) END`, 'has_table_privilege()'],
  ])('finds the site in %s', (sql, shown) => {
    expect(shownOf(sql)).toContain(shown);
  });

  it('names every function, operator and cast a site calls, and whether it starts from constants only', () => {
    expect(sites("SELECT id FROM t WHERE x > now() - interval '1 day'").sites).toEqual([
      { shown: 'operator -', names: ['-', 'now'], constant: true, numeric: false },
    ]);
    expect(sites('SELECT id FROM t WHERE x = 100 * 1.2').sites).toEqual([
      { shown: 'operator *', names: ['*'], constant: true, numeric: true },
    ]);
    expect(sites("SELECT id FROM t WHERE x = ('1' || '2')::int").sites).toEqual([
      { shown: 'cast to int4', names: ['::int4', '||'], constant: true, numeric: false },
    ]);
    expect(sites('SELECT id FROM t WHERE x = length(current_user)').sites).toEqual([
      { shown: 'length()', names: ['length'], constant: false, numeric: false },
    ]);
  });

  it('finds none where every call has a column of the row among its arguments, or runs after the filter', () => {
    for (const sql of [
      "SELECT id FROM t WHERE note = 'x' AND lower(note) LIKE 'a%' AND id IN (1, 2, 3) AND id = $1",
      "SELECT id FROM t WHERE customer_id = $1::int AND note::text = 'x' AND placed::date = '2024-01-01'",
      "SELECT id FROM t WHERE id BETWEEN 1 AND 10 AND note IS NOT NULL AND CASE WHEN note = 'x' THEN id > 1 ELSE true END",
      `SELECT id, ${HTP} FROM t ORDER BY current_setting('x'), id`,
      'SELECT count(*) FROM t GROUP BY c HAVING count(*) > 1',
      'SELECT * FROM t a JOIN u b USING (id) WHERE EXISTS (SELECT FROM v WHERE v.id = a.id)',
      "SELECT * FROM t WHERE 'nope'::regclass IS NULL",
    ]) {
      expect(sites(sql), sql).toEqual({ sites: [], opaque: undefined });
    }
  });

  it('counts an outer query column in a subquery as the server does: a constant there', () => {
    expect(shownOf("SELECT * FROM v WHERE EXISTS (SELECT FROM t WHERE t.note = 'x' AND has_table_privilege(v.name, 'select'))")).toEqual([
      'has_table_privilege()',
    ]);
    // Unqualified, a name may be the outer query's: judged as one, with the tables whose column it may be.
    const unqualified = parsePostgres(
      "SELECT * FROM v WHERE EXISTS (SELECT FROM s.t WHERE t.note = 'x' AND has_table_privilege(name, 'select'))",
    );
    expect(unqualified.ok && unqualified.conditions).toContainEqual(
      expect.objectContaining({ shown: 'has_table_privilege()', columns: ['name'], relations: ['"s"."t"'] }),
    );
    // Read again as the level's own column, no site remains.
    expect(shownOf("SELECT * FROM v WHERE v.id IN (SELECT t.id FROM t WHERE lower(name) = 'x')")).toEqual(['operator =']);
    // A level that reads a CTE or a subquery cannot be asked for its columns: the site stands alone.
    const cte = parsePostgres("WITH t AS (SELECT 1 AS name) SELECT * FROM v WHERE v.id IN (SELECT 1 FROM t WHERE lower(name) = 'x')");
    expect(cte.ok && cte.conditions.filter((site) => !site.views).map((site) => site.relations)).toEqual([undefined]);
    expect(
      shownOf("SELECT * FROM v WHERE v.id IN (SELECT t.id FROM t WHERE t.note = 'x' AND has_table_privilege(t.name, 'select'))"),
    ).toEqual([]);
  });

  it('names a form whose functions it cannot name as opaque', () => {
    expect(sites("SELECT id FROM t WHERE CASE WHEN note = 'x' THEN greatest(1, 2) = 1 END").opaque).toBe('GREATEST or LEAST');
    expect(sites('SELECT id FROM t WHERE greatest(id, 2) = 2').opaque).toBeUndefined();
  });

  it('hands the sites to the resolve step where rows are separated, and refuses an opaque form there', () => {
    const sql = `SELECT id FROM t WHERE CASE WHEN note = 'x' THEN ${HTP} END`;
    const separated = checkStatement(sql, { dialect: 'postgres', allowWrite: false, rowSeparation: true }, true);
    expect(separated.ok && separated.references?.conditions?.filter((site) => !site.views).map((site) => site.shown)).toEqual([
      'has_table_privilege()',
    ]);
    const plain = checkStatement(sql, { dialect: 'postgres', allowWrite: false }, true);
    expect(plain.ok && plain.references?.conditions).toBeUndefined();
    const opaque = checkStatement("SELECT id FROM t WHERE CASE WHEN note = 'x' THEN xmlparse(content 'x') IS NULL END", {
      dialect: 'postgres',
      allowWrite: false,
      rowSeparation: true,
    });
    expect(opaque.ok === false && opaque.rule).toBe('leaky-condition');
  });

  describe('the condition as the planner sees it', () => {
    const NOTE = "CASE WHEN note ^@ 'hidden' THEN";
    it.each([
      `SELECT id FROM orders WHERE ${NOTE} (SELECT true LIMIT -1) ELSE true END`,
      `SELECT id FROM orders WHERE ${NOTE} (SELECT true OFFSET -1) ELSE true END`,
      `SELECT id FROM orders WHERE ${NOTE} (SELECT x FROM has_table_privilege('nope', 'select') x) ELSE true END`,
      `SELECT id FROM orders WHERE ${NOTE} (SELECT ('-1'::information_schema.cardinal_number) IS NULL) ELSE true END`,
      `SELECT id FROM orders WHERE ${NOTE} EXISTS (SELECT FROM pg_class LIMIT -1) ELSE true END`,
      `SELECT id FROM orders WHERE ${NOTE} ARRAY(SELECT 1 LIMIT -1) IS NULL ELSE true END`,
      `SELECT id FROM orders WHERE ${NOTE} (1, 2) = (SELECT 1, 2 LIMIT -1) ELSE true END`,
      // A name of the sub-select's own FROM is no correlation, even when the outer query has it too.
      `SELECT id FROM orders o WHERE ${NOTE} EXISTS (SELECT FROM pg_class o WHERE o.oid = 0 LIMIT -1) ELSE true END`,
      `UPDATE orders SET amount = amount WHERE ${NOTE} (SELECT true LIMIT -1) ELSE true END`,
    ])('finds a sub-select that reads no column of the row (an init plan) in %s', (sql) => {
      expect(sites(sql).sites).toContainEqual(expect.objectContaining({ shown: 'a sub-select' }));
    });

    it('keeps IN (SELECT ...) and a sub-select on a column of the row', () => {
      for (const sql of [
        'SELECT id FROM orders WHERE customer_id IN (SELECT c FROM allowed)',
        `SELECT id FROM orders WHERE ${NOTE} id IN (SELECT 1 LIMIT -1) ELSE true END`,
        'SELECT id FROM orders o WHERE EXISTS (SELECT FROM items i WHERE i.order_id = o.id)',
        'SELECT id FROM orders o WHERE amount > (SELECT max(i.n) FROM items i WHERE i.order_id = o.id)',
        'SELECT id FROM orders WHERE id = ANY (SELECT 1) AND id <> ALL (SELECT 2)',
      ]) {
        expect(sites(sql), sql).toEqual({ sites: [], opaque: undefined });
      }
    });

    it('reads a name an alias list renamed away as the outer query column it then is', () => {
      const sql = `SELECT (SELECT count(*) FROM orders AS o(id, customer_id, item, n2) WHERE CASE WHEN o.n2 ^@ 'hidden' THEN has_table_privilege(note, 'select') ELSE true END) FROM (VALUES ('nope')) AS v(note)`;
      const parsed = parsePostgres(sql);
      expect(parsed.ok && parsed.conditions).toContainEqual(
        expect.objectContaining({ shown: 'has_table_privilege()', columns: ['note'], relations: ['"orders"'], renamed: [4] }),
      );
      // A name the alias list gives is the level's own column.
      expect(shownOf("SELECT * FROM v WHERE v.id IN (SELECT n FROM t AS a(n) WHERE lower(n) = 'x')")).toEqual([]);
    });

    it.each([
      `SELECT o.id FROM (SELECT 'nope'::text AS x) v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `SELECT o.id FROM (SELECT 'nope'::text AS x) v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(x, 'select') ELSE true END`,
      `SELECT o.id FROM (SELECT 'nope'::text) v(x) JOIN orders o ON CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `SELECT o.id FROM (VALUES ('nope')) v(x), orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `SELECT o.id FROM (SELECT * FROM (SELECT 'nope'::text AS x) w) v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `SELECT o.id FROM (SELECT 'a' AS x UNION ALL SELECT 'nope') v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `UPDATE orders o SET amount = amount FROM (SELECT 'nope'::text AS x) v WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `WITH v AS (SELECT 'nope'::text AS x) SELECT o.id FROM v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END`,
      `WITH v(x) AS (SELECT 'nope'::text) SELECT o.id FROM v AS w, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(w.x, 'select') ELSE true END`,
      `WITH v AS (SELECT 'nope'::text AS x) SELECT o.id FROM (v JOIN orders o ON true) j WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(j.x, 'select') ELSE true END`,
    ])('reads a column of a subquery or CTE as the expression that defines it in %s', (sql) => {
      expect(shownOf(sql)).toContain('has_table_privilege()');
    });

    it('keeps a subquery or CTE whose columns are columns of tables, and joins', () => {
      for (const sql of [
        `WITH c AS (SELECT id, note FROM orders) SELECT c.id FROM c WHERE lower(c.note) = 'x'`,
        `SELECT v.id FROM (SELECT o.id, o.note AS n FROM orders o) v WHERE lower(v.n) = 'x'`,
        `SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE lower(c.name) = 'x'`,
        `WITH m AS (SELECT max(amount) AS v FROM orders) SELECT o.id FROM orders o, m WHERE o.amount > m.v`,
        `SELECT o.id FROM orders o, (SELECT 1 AS one) v WHERE o.id > v.one`,
        `WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r, orders o WHERE o.id = r.n`,
      ]) {
        expect(sites(sql), sql).toEqual({ sites: [], opaque: undefined });
      }
    });

    it('reads each column of a relation named in FROM once more as a view column defined on no column of the row', () => {
      const parsed = parsePostgres("SELECT o.id FROM evil v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN v.x ELSE true END");
      const views = parsed.ok ? parsed.conditions.filter((site) => site.views) : [];
      expect(views).toContainEqual(
        expect.objectContaining({
          viewColumn: true,
          views: expect.arrayContaining([
            ['"evil"', 'x', 0],
            ['"orders"', 'note', 0],
          ]),
        }),
      );
      // Unqualified, the name may be a column of any relation the level names; an alias list gives its position.
      const bare = parsePostgres('SELECT 1 FROM s.a, b AS c(z) WHERE lower(z) = $1');
      expect(bare.ok && bare.conditions).toEqual([
        expect.objectContaining({
          views: [
            ['"s"."a"', 'z', 0],
            ['"b"', 'z', 1],
          ],
          viewColumn: true,
        }),
      ]);
      // A form with no function named here is no opaque form in that reading: its columns are then the catalog's to judge.
      // A function in FROM, which the planner may inline: its columns are the catalog's to judge as well.
      const called = parsePostgres('SELECT 1 FROM f() AS r(a), orders o WHERE CASE WHEN o.note = $1 THEN r.a END');
      expect(called.ok && called.conditions.filter((site) => site.views)).toContainEqual(
        expect.objectContaining({ views: expect.arrayContaining([['f()', 'a', -1]]), viewColumn: true }),
      );
      const greatest = parsePostgres('SELECT id FROM t WHERE greatest(id, 2) = 2');
      expect(greatest.ok && greatest.opaqueCondition).toBeUndefined();
    });
  });
});
