/**
 * Built-ins that take a relation and run the code the server keeps beside it (satisfies_hash_partition:
 * the partition key's hash functions; bt_index_check: the index's comparison function and
 * expressions; ...): a relation named by a constant name is handed to the resolve step as a read of
 * it; one given as an OID, or chosen when the statement runs, is refused by both checks, each on
 * its own, on every connection.
 */
import { describe, expect, it } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { PG_RUNS_RELATION_CODE } from '../../../../daemon/policy/pg-functions.generated.js';
import { postgresTokenObjection } from '../../../../daemon/policy/pg-functions.js';

const read = { dialect: 'postgres', allowWrite: false } as const;
const write = { dialect: 'postgres', allowWrite: true } as const;

const parserAlone = (sql: string, allowWrite: boolean) =>
  postgresParserObjection(sql, { dialect: 'postgres', allowWrite }, 'read', (inner) => checkStatement(inner, read));
const tokensAlone = (sql: string, allowWrite: boolean) => postgresTokenObjection(lex(sql, DIALECTS.postgres.syntax).tokens, allowWrite);

describe('functions that run a relation’s own code', () => {
  it('are classified from pg_proc with the position of their relation argument', () => {
    expect(PG_RUNS_RELATION_CODE).toMatchObject({
      satisfies_hash_partition: [0],
      bt_index_check: [0],
      bt_index_parent_check: [0],
      gin_clean_pending_list: [0],
      brin_summarize_new_values: [0],
      brin_summarize_range: [0],
      gist_page_items: [1],
      brin_page_items: [1],
    });
    // Functions that only read pages, sizes or catalog rows of the relation are not in the class.
    for (const name of ['pgstattuple', 'pg_relation_size', 'verify_heapam', 'pg_visibility', 'nextval']) {
      expect(PG_RUNS_RELATION_CODE).not.toHaveProperty(name);
    }
  });

  it.each([
    'SELECT satisfies_hash_partition(31420, 2, 0, 5)',
    "SELECT satisfies_hash_partition('31420', 2, 0, 5)",
    "SELECT satisfies_hash_partition('31420'::regclass, 2, 0, 5)",
    'SELECT satisfies_hash_partition(31420::regclass, 2, 0, 5)',
    "SELECT satisfies_hash_partition(c.oid, 2, 0, 5) FROM pg_class c WHERE c.relname = 'hp'",
    "SELECT pg_catalog.satisfies_hash_partition(to_regclass('hp'), 2, 0, 5)",
    "SELECT satisfies_hash_partition('hp'::text::regclass, 2, 0, 5)",
    'SELECT bt_index_check(i.indexrelid::regclass) FROM pg_index i',
    'SELECT bt_index_check(-1)',
    "SELECT gin_clean_pending_list(' ')",
    "SELECT (x).bt_index_check FROM (SELECT 'i'::regclass AS x) s",
  ])('refuses %s on every connection, in both checks', (sql) => {
    for (const allowWrite of [false, true]) {
      expect(checkStatement(sql, allowWrite ? write : read), sql).toMatchObject({ ok: false });
      // On a writable connection no other rule refuses it first (gin_clean_pending_list writes).
      const rule = allowWrite ? 'dynamic-sql' : expect.any(String);
      expect(parserAlone(sql, allowWrite), `parser: ${sql}`).toMatchObject({ ok: false, rule });
      expect(tokensAlone(sql, allowWrite), `tokens: ${sql}`).toMatchObject({ ok: false });
    }
  });

  it('says the relation is given as a number, or chosen when the statement runs', () => {
    expect(checkStatement('SELECT satisfies_hash_partition(31420, 2, 0, 5)', read)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/satisfies_hash_partition\(\) runs code the server keeps beside the relation .* as a number/),
    });
    expect(checkStatement('SELECT bt_index_check(c.oid::regclass) FROM pg_class c', read)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/bt_index_check\(\) runs code .* chosen only when the statement runs/),
    });
  });

  it.each([
    ["SELECT bt_index_check('public.measured_x')", 'public.measured_x'],
    ["SELECT bt_index_check('measured_x'::regclass, true)", 'measured_x'],
    ["SELECT pg_catalog.bt_index_check('measured_x'::pg_catalog.regclass, true)", 'measured_x'],
    ["SELECT satisfies_hash_partition('public.hp'::regclass, 2, 0, 5)", 'public.hp'],
  ])('hands the relation %s names to the resolve step as a read', (sql, relation) => {
    const verdict = checkStatement(sql, read, true);
    expect(verdict, sql).toMatchObject({ ok: true, kind: 'read' });
    expect(verdict.ok && verdict.references?.relations).toEqual(expect.arrayContaining([relation]));
    expect(parserAlone(sql, false), `parser: ${sql}`).toBeUndefined();
    expect(tokensAlone(sql, false), `tokens: ${sql}`).toBeUndefined();
  });
});
