import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/check-statement.js';
import { parsePostgres } from '../../../../daemon/policy/pg-parser.js';

/** The sites of `sql` as `shown` -> names, and the opaque form. */
function sites(sql: string) {
  const parsed = parsePostgres(sql);
  if (!parsed.ok) throw new Error(parsed.message);
  return {
    sites: parsed.conditions.map((site) => ({
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
    expect(unqualified.ok && unqualified.conditions).toEqual([
      expect.objectContaining({ shown: 'has_table_privilege()', columns: ['name'], relations: ['"s"."t"'] }),
    ]);
    // Read again as the level's own column, no site remains.
    expect(shownOf("SELECT * FROM v WHERE EXISTS (SELECT FROM t WHERE lower(name) = 'x')")).toEqual(['operator =']);
    // A level that reads a CTE or a subquery cannot be asked for its columns: the site stands alone.
    const cte = parsePostgres("WITH t AS (SELECT 1 AS name) SELECT * FROM v WHERE EXISTS (SELECT FROM t WHERE lower(name) = 'x')");
    expect(cte.ok && cte.conditions.map((site) => site.relations)).toEqual([undefined]);
    expect(shownOf("SELECT * FROM v WHERE EXISTS (SELECT FROM t WHERE t.note = 'x' AND has_table_privilege(t.name, 'select'))")).toEqual(
      [],
    );
  });

  it('names a form whose functions it cannot name as opaque', () => {
    expect(sites("SELECT id FROM t WHERE CASE WHEN note = 'x' THEN greatest(1, 2) = 1 END").opaque).toBe('GREATEST or LEAST');
    expect(sites('SELECT id FROM t WHERE greatest(id, 2) = 2').opaque).toBeUndefined();
  });

  it('hands the sites to the resolve step where rows are separated, and refuses an opaque form there', () => {
    const sql = `SELECT id FROM t WHERE CASE WHEN note = 'x' THEN ${HTP} END`;
    const separated = checkStatement(sql, { dialect: 'postgres', allowWrite: false, rowSeparation: true }, true);
    expect(separated.ok && separated.references?.conditions?.map((site) => site.shown)).toEqual(['has_table_privilege()']);
    const plain = checkStatement(sql, { dialect: 'postgres', allowWrite: false }, true);
    expect(plain.ok && plain.references?.conditions).toBeUndefined();
    const opaque = checkStatement("SELECT id FROM t WHERE CASE WHEN note = 'x' THEN xmlparse(content 'x') IS NULL END", {
      dialect: 'postgres',
      allowWrite: false,
      rowSeparation: true,
    });
    expect(opaque.ok === false && opaque.rule).toBe('leaky-condition');
  });
});
