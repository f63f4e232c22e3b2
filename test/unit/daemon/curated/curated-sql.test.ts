import { describe, expect, it } from 'vitest';
import {
  bindCurated,
  type CuratedTool,
  curatedEntryBytes,
  offeredTools,
  placeholderProblems,
  scanPlaceholders,
} from '../../../../shared/curated.js';

const tool = (sql: string, parameters: CuratedTool['parameters'] = []): CuratedTool => ({ name: 't', description: 'd', sql, parameters });
const names = (sql: string, engine: Parameters<typeof scanPlaceholders>[1]) =>
  scanPlaceholders(sql, engine).placeholders.map((p) => p.name);

describe(':name placeholders', () => {
  it('finds names outside literals, quoted identifiers, comments and casts', () => {
    const sql = `SELECT ':a', "x:b", c::int, /* :d */ e -- :f\n FROM t WHERE g = :g AND h = :h_2`;
    expect(names(sql, 'postgres')).toEqual(['g', 'h_2']);
    expect(names('SELECT $$ :a $$, $q$ :b $q$ FROM t WHERE x = :x', 'postgres')).toEqual(['x']);
    expect(names("SELECT 'it\\'s :a', `c:d` FROM t # :e\nWHERE x = :x", 'mysql')).toEqual(['x']);
    expect(names("SELECT 'it''s :a' FROM t WHERE x=:x", 'sqlite')).toEqual(['x']);
  });

  it('reports positional markers so a file cannot mix them with names', () => {
    expect(scanPlaceholders('SELECT * FROM t WHERE a = ? AND b = :b', 'sqlite').positional).toEqual(['?']);
    expect(scanPlaceholders('SELECT * FROM t WHERE a = $1', 'postgres').positional).toEqual(['$1']);
    expect(scanPlaceholders("SELECT '?' FROM t", 'mysql').positional).toEqual([]);
  });

  it('binds $n once per name on PostgreSQL, and ? per use elsewhere, with the values in order', () => {
    const t = tool('SELECT * FROM t WHERE a = :a AND b = :b OR a2 = :a', [
      { name: 'a', type: 'integer' },
      { name: 'b', type: 'string' },
    ]);
    expect(bindCurated(t, 'postgres', { a: 1, b: 'x' })).toEqual({
      sql: 'SELECT * FROM t WHERE a = $1 AND b = $2 OR a2 = $1',
      params: [1, 'x'],
    });
    expect(bindCurated(t, 'mysql', { a: 1, b: 'x' })).toEqual({
      sql: 'SELECT * FROM t WHERE a = ? AND b = ? OR a2 = ?',
      params: [1, 'x', 1],
    });
    expect(bindCurated(t, 'hana', { b: 'x', a: 1 }).params).toEqual([1, 'x', 1]);
  });

  it('refuses a missing, unknown or mistyped argument, naming it', () => {
    const t = tool('SELECT :n, :f, :b', [
      { name: 'n', type: 'integer' },
      { name: 'f', type: 'number' },
      { name: 'b', type: 'boolean' },
    ]);
    expect(() => bindCurated(t, 'sqlite', { n: 1, f: 1.5 })).toThrow(/needs the argument "b" \(boolean\)/);
    expect(() => bindCurated(t, 'sqlite', { n: 1.5, f: 1, b: true })).toThrow(/"n" must be an integer/);
    expect(() => bindCurated(t, 'sqlite', { n: 1, f: 1, b: 'yes' })).toThrow(/"b" must be a boolean/);
    expect(() => bindCurated(t, 'sqlite', { n: 1, f: 1, b: true, x: 1 })).toThrow(/has no argument "x"/);
  });

  it('names undeclared, unused and duplicate parameters and built-in names', () => {
    const problems = placeholderProblems(
      {
        name: 'list_tables',
        description: 'd',
        sql: 'SELECT :a, :c',
        parameters: [
          { name: 'a', type: 'string' },
          { name: 'b', type: 'string' },
          { name: 'a', type: 'string' },
        ],
      },
      'sqlite',
      3,
    );
    expect(problems.map((p) => `${p.path.join('.')}: ${p.message.split(';')[0]}`)).toEqual([
      `tools.3.name: "list_tables" is a built-in tool's name`,
      'tools.3.parameters.2.name: the parameter "a" is declared twice',
      'tools.3.sql: the statement uses :c, which is not declared',
      'tools.3.parameters.1.name: the parameter "b" is declared but the statement has no :b',
    ]);
  });
});

describe('the share of tools/list', () => {
  it('offers tools in order while they fit, and stops at the first that does not', () => {
    const small = (n: number) => ({ ...tool(`SELECT :p${n}`, [{ name: `p${n}`, type: 'integer' as const }]), name: `tool_${n}` });
    const tools = Array.from({ length: 12 }, (_, i) => small(i));
    const each = curatedEntryBytes(tools[0] as CuratedTool);
    const mixed = offeredTools(tools, false);
    const only = offeredTools(tools, true);
    expect(mixed.offered.length).toBe(Math.floor(640 / each));
    expect(only.offered.length).toBe(Math.floor(1900 / each));
    expect(mixed.bytes).toBeLessThanOrEqual(640);
    expect(mixed.left[0]?.name).toBe(`tool_${mixed.offered.length}`);
  });
});
