import { describe, expect, it } from 'vitest';
import { REMOTE_DISCONNECT_ALL } from '../../../../../daemon/engines/postgres/postgres-cleanup.js';
import { everyText } from '../../../../helpers/pg-own-sql.js';
import { searchPathLookups } from './own-sql-check.js';

describe("hanactl's own PostgreSQL statements resolve nothing through the session's search_path", () => {
  it('the check finds each form the server looks up by name, and passes the pinned forms', () => {
    const cases: [string, RegExp][] = [
      ['SELECT set_config($1, $2, true)', /function set_config/],
      ['SELECT 1 WHERE 1 = 1', /operator =/],
      ["SELECT 1 FROM pg_catalog.pg_class c WHERE c.relkind IN ('r')", /IN \(list\)/],
      ["SELECT 1 FROM pg_catalog.pg_class c WHERE c.relname LIKE 'a%'", /LIKE/],
      ['SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = ANY ($1)', /operator =/],
      ["SELECT CASE c.relkind WHEN 'r' THEN 1 END FROM pg_catalog.pg_class c", /CASE x WHEN/],
      ['SELECT 1 WHERE 1 IS DISTINCT FROM 2', /IS DISTINCT FROM/],
      ['SELECT 1 WHERE 1 BETWEEN 0 AND 2', /BETWEEN/],
      ['SELECT pg_catalog.nullif(1, 2), NULLIF(1, 2)', /NULLIF/],
      ['SELECT 1 WHERE 1 IN (SELECT 1)', /IN \(SELECT/],
      ["SELECT 'a' || 'b'", /operator \|\|/],
      ['SELECT $1::text', /type text/],
      ['SELECT 1 FROM pg_class', /relation pg_class/],
      ['SELECT 1 FROM pg_catalog.pg_class a JOIN pg_catalog.pg_class b USING (oid)', /JOIN USING/],
      [`SELECT 'a' COLLATE "C"`, /collation C/],
      [`SELECT 'pg_class'::pg_catalog.regclass`, /unqualified name/],
      [`SELECT pg_catalog.count(*) FROM pg_catalog.pg_class ORDER BY 1 USING <`, /USING </],
    ];
    for (const [sql, finding] of cases) expect(searchPathLookups(sql).join('; '), sql).toMatch(finding);
    const pinned = `WITH RECURSIVE w(n) AS (SELECT 1) SELECT pg_catalog.set_config($1, $2::pg_catalog.text, true), 1::int, true::boolean,
      pg_catalog.count(*) OVER (), 'a' COLLATE pg_catalog."C", 'pg_catalog.pg_class'::pg_catalog.regclass
      FROM w JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) w.n
      WHERE c.oid OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.oid[]) AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT 'r'::"char"))
      ORDER BY 1`;
    expect(searchPathLookups(pinned.replace(`'r'::"char"`, `'r'::pg_catalog."char"`))).toEqual([]);
  });

  it('every statement hanactl sends on PostgreSQL (calls, resolve steps, clean-up, catalog tools, cancels) names built-ins by pg_catalog', async () => {
    const texts = await everyText();
    expect(texts.size).toBeGreaterThan(40);
    const found: string[] = [];
    for (const [where, sql] of texts) {
      const lookups = searchPathLookups(sql);
      if (lookups.length > 0) found.push(`${where}: ${[...new Set(lookups)].join(', ')}`);
    }
    expect(found).toEqual([]);
  });

  it('the clean-up block pins search_path before it names anything, and declares its variables with pinned types', () => {
    const body = /DO \$hanactl\$([\s\S]*)\$hanactl\$/.exec(REMOTE_DISCONNECT_ALL)?.[1] ?? '';
    const declared = /DECLARE([\s\S]*?)BEGIN/.exec(body)?.[1] ?? '';
    for (const variable of declared.split(';').filter((d) => d.trim() !== ''))
      expect(variable.trim(), variable).toMatch(/^\w+ pg_catalog\.\w+$/);
    const first = /BEGIN\s+([^;]*);/.exec(body)?.[1] ?? '';
    expect(first).toBe("PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true)");
  });
});
