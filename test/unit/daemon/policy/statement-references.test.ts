import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';

const read = { dialect: 'postgres', allowWrite: false } as const;
const write = { dialect: 'postgres', allowWrite: true } as const;

/** What an accepted statement hands the resolve step. */
function referencesOf(sql: string, options: { readonly dialect: 'postgres'; readonly allowWrite: boolean } = read) {
  const verdict = checkStatement(sql, options, true);
  expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
  return verdict.ok ? verdict.references : undefined;
}

describe('what a statement names for the resolve step, beyond calls and relations', () => {
  it('names operators, in every place the grammar takes one', () => {
    expect(referencesOf('SELECT 1 ### 2')?.operators).toEqual(['###']);
    expect(referencesOf('SELECT 1 OPERATOR(public.###) 2')?.operators).toEqual(['###']);
    expect(referencesOf('SELECT 1 WHERE 1 ### ANY (SELECT 2)')?.operators).toEqual(['###']);
    expect(referencesOf('SELECT x FROM t ORDER BY x USING ###')?.operators).toEqual(['###']);
    expect(referencesOf("SELECT CASE x WHEN 1 THEN 'a' END FROM t")?.operators).toEqual(['=']);
    expect(referencesOf("SELECT CASE WHEN x THEN 'a' END FROM t")?.operators ?? []).toEqual([]);
  });

  it('names types of casts, and names after a dot as possible one-argument calls', () => {
    expect(referencesOf('SELECT ROW(1)::pk::text')?.types).toEqual(expect.arrayContaining(['pk', 'text']));
    expect(referencesOf('SELECT CAST(1 AS "Checked")')?.types).toEqual(['Checked']);
    expect(referencesOf('SELECT o.peek, (o).other FROM orders o')?.attributes).toEqual(expect.arrayContaining(['peek', 'other']));
  });

  it('names every name in call position as a type too, which the server converts to where no function fits', () => {
    const names = (sql: string): readonly string[] => referencesOf(sql)?.types ?? [];
    expect(names('SELECT dom(1), "Dom"(2), s.dom3(3)')).toEqual(expect.arrayContaining(['dom', 'Dom', 'dom3']));
    expect(names("SELECT _dom('{1}')")).toEqual(['_dom']);
    expect(names('SELECT (1).dom, o.peek FROM orders o')).toEqual(expect.arrayContaining(['dom', 'peek']));
    expect(names('SELECT 1 FROM t WHERE x IN (SELECT dom(y) FROM u)')).toContain('dom');
    expect(names('SELECT json_scalar(1)')).toContain('json_scalar');
  });

  it('names the procedure a CALL runs, and what its arguments name, for the walk to follow', () => {
    const call = referencesOf('CALL app.remove_product(pick(2), (SELECT id FROM products LIMIT 1))', write);
    expect(call?.functions).toEqual(expect.arrayContaining(['remove_product', 'pick']));
    expect(call?.relations).toEqual(['"products"']);
  });

  it('names SQL/JSON keyword forms as the calls an older server makes of them', () => {
    const { functions = [] } = referencesOf("SELECT json_scalar(1), json_serialize(1), json_object('a': 1), json_array(1)") ?? {};
    expect(functions).toEqual(expect.arrayContaining(['json_scalar', 'json_serialize', 'json_object', 'json_array']));
    expect(referencesOf("SELECT json_value(j, '$') FROM t")?.functions).toEqual(['json_value']);
  });

  it('adds the names of SQL text a function runs, and the relation a table_to_xml literal names', () => {
    const inner = referencesOf("SELECT query_to_xml('SELECT * FROM acts_v WHERE 1 ### 2', true, true, '')");
    expect(inner?.relations).toEqual(['"acts_v"']);
    expect(inner?.operators).toEqual(['###']);
    expect(inner?.functions).toEqual(['query_to_xml']);
    expect(referencesOf("SELECT table_to_xml('app.acts_v', true, false, '')")?.relations).toEqual(['app.acts_v']);
  });

  it('names the relation a write writes, as a relation and as written', () => {
    for (const sql of [
      'INSERT INTO app."Orders" (n) VALUES (1) RETURNING n',
      'UPDATE app."Orders" SET n = 2',
      'DELETE FROM app."Orders"',
      'MERGE INTO app."Orders" o USING src s ON o.n = s.n WHEN MATCHED THEN DELETE',
      'WITH w AS (DELETE FROM app."Orders" RETURNING n) SELECT n FROM w',
    ]) {
      const references = referencesOf(sql, write);
      expect(references?.relations, sql).toContain('"app"."Orders"');
      expect(references?.written, sql).toEqual(['"app"."Orders"']);
    }
    expect(referencesOf('SELECT n FROM app."Orders"')?.written ?? []).toEqual([]);
  });

  it('tells the relations a write adds rows to or changes from those it only deletes from', () => {
    const of = (sql: string) => {
      const references = referencesOf(sql, write);
      return { inserts: references?.inserts ?? [], updates: references?.updates ?? [] };
    };
    const v = '"v"';
    expect(of('INSERT INTO v (a) VALUES (1)')).toEqual({ inserts: [v], updates: [] });
    expect(of('INSERT INTO v (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2')).toEqual({ inserts: [v], updates: [v] });
    expect(of('INSERT INTO v (a) VALUES (1) ON CONFLICT DO NOTHING')).toEqual({ inserts: [v], updates: [] });
    expect(of('UPDATE v SET a = 1')).toEqual({ inserts: [], updates: [v] });
    expect(of('DELETE FROM v')).toEqual({ inserts: [], updates: [] });
    expect(of('MERGE INTO v USING t ON true WHEN MATCHED THEN UPDATE SET a = 1')).toEqual({ inserts: [], updates: [v] });
    expect(of('MERGE INTO v USING t ON true WHEN NOT MATCHED THEN INSERT (a) VALUES (1)')).toEqual({ inserts: [v], updates: [] });
    expect(of('MERGE INTO v USING t ON true WHEN MATCHED THEN DELETE')).toEqual({ inserts: [], updates: [] });
    expect(of('WITH x AS (UPDATE v SET a = 1 RETURNING a) SELECT * FROM x')).toEqual({ inserts: [], updates: [v] });
  });
});
