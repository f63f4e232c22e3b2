import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresNamedRelationRule } from '../../../../daemon/policy/named-relations.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { PG_EXECUTOR_STATISTICS_VIEWS, PG_NAMES_RELATION } from '../../../../daemon/policy/pg-functions.generated.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const separated: PolicyOptions = { dialect: 'postgres', allowWrite: false, rowSeparation: true };
const plain: PolicyOptions = { dialect: 'postgres', allowWrite: false };

/** The parser's check alone, as if the token rules had been fooled into calling `sql` a read. */
const parserAlone = (sql: string, options: PolicyOptions) =>
  postgresParserObjection(sql, options, 'read', (inner) => checkStatement(inner, { ...options, allowWrite: false }));

/** The token rule for relations named by a string, alone. */
const tokensAlone = (sql: string) => postgresNamedRelationRule(lex(sql, DIALECTS.postgres.syntax).tokens);

/** `sql` refused with `rule` where rows are separated, by the whole check and by each check on its own; answered elsewhere. */
function refusedByEach(sql: string, rule: string): void {
  expect(checkStatement(sql, separated), sql).toMatchObject({ ok: false, rule });
  expect(parserAlone(sql, separated), `parser: ${sql}`).toMatchObject({ ok: false, rule });
  expect(tokensAlone(sql), `tokens: ${sql}`).toMatchObject({ ok: false, rule });
  expect(checkStatement(sql, plain), `plain: ${sql}`).toMatchObject({ ok: true });
}

const FUNCTIONS = Object.keys(PG_NAMES_RELATION);

/**
 * Where rows are separated, a relation a function reads by its name (table_to_xml and its
 * family) meets the rules keyed by a relation's name, as one in FROM does: a search over
 * pg_sequences' last value, pg_stat_xact_user_tables' idx_tup_fetch or pg_class's reltuples
 * through table_to_xml otherwise answers whether a hidden row holds a value.
 */
describe('relations named by a string where rows are separated', () => {
  test('the family is classified from pg_proc', () => {
    expect(FUNCTIONS.sort()).toEqual(['table_to_xml', 'table_to_xml_and_xmlschema', 'table_to_xmlschema']);
  });

  test.each(FUNCTIONS)('%s over every executor statistics view is refused by each check', (fn) => {
    for (const view of Object.keys(PG_EXECUTOR_STATISTICS_VIEWS)) {
      // pg_stat_activity and its kin are credential reads on every connection, judged first.
      const sql = `SELECT ${fn}('pg_catalog.${view}', true, false, '')`;
      const verdict = checkStatement(sql, separated);
      expect(verdict, sql).toMatchObject({ ok: false });
      expect(tokensAlone(sql), `tokens: ${sql}`).toMatchObject({ ok: false, rule: 'executor-statistics' });
    }
  });

  test.each([
    "SELECT (xpath('//row[sequencename=\"orders_id_seq\"]/last_value/text()', table_to_xml('pg_catalog.pg_sequences', true, false, '')))::text[]",
    "SELECT (xpath('//row[relname=\"orders\"]/idx_tup_fetch/text()', table_to_xml('pg_catalog.pg_stat_xact_user_tables', true, false, '')))[1]::text::int AS before, (SELECT count(*) FROM app.orders WHERE item = 'secret-b-item') AS visible",
    "SELECT table_to_xml('pg_stat_user_tables', true, false, '')",
    "SELECT table_to_xml(' PG_STATIO_USER_TABLES ', true, false, '')",
    "SELECT table_to_xml('\"pg_stat_database\"', true, false, '')",
    "SELECT table_to_xml('pg_locks', true, false, '')",
    "SELECT table_to_xmlschema('pg_catalog.pg_stat_xact_user_tables', true, false, '')",
    "SELECT x FROM table_to_xml_and_xmlschema('pg_statio_user_indexes', false, true, 'n') AS x",
    "SELECT pg_catalog.table_to_xml('pg_catalog.pg_sequences', true, false, '')",
  ])('%s is refused as executor statistics by each check', (sql) => {
    refusedByEach(sql, 'executor-statistics');
  });

  test.each([
    "SELECT (xpath('//row[relname=\"orders_c2\"]/reltuples/text()', table_to_xml('pg_catalog.pg_class', true, false, '')))[1]::text",
    "SELECT table_to_xml('pg_class', true, false, '')",
    "SELECT table_to_xml('\"pg_class\"', true, false, '')",
    "SELECT table_to_xml('PG_CATALOG.PG_CLASS', true, false, '')",
    "SELECT table_to_xml_and_xmlschema('pg_class', true, true, '')",
  ])("%s is refused as pg_class's figures by each check", (sql) => {
    refusedByEach(sql, 'planner-figures');
  });

  test.each([
    "SELECT query_to_xml('SELECT table_to_xml(''pg_sequences'', true, false, '''')', true, false, '')",
    "SELECT query_to_xml('SELECT table_to_xml(''pg_class'', true, false, '''')', true, false, '')",
  ])('%s, SQL text a function runs, is refused at its own level', (sql) => {
    expect(checkStatement(sql, separated)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/refused \((executor-statistics|planner-figures)\)/),
    });
    expect(parserAlone(sql, separated)).toMatchObject({ ok: false });
    expect(checkStatement(sql, plain)).toMatchObject({ ok: true });
  });

  test('the refusal names the function and the relation, not the text around it', () => {
    const verdict = checkStatement("SELECT table_to_xml('pg_catalog.pg_class', true, false, '')", separated);
    expect(verdict.ok ? '' : verdict.message).toMatch(/^Refused: table_to_xml\(\) of pg_class reads pg_class's row figures/);
  });

  test.each([
    "SELECT table_to_xml('app.orders', true, false, '')",
    "SELECT table_to_xml('pg_catalog.pg_namespace', true, false, '')",
    "SELECT table_to_xml('pg_class_stats', true, false, '')",
    "SELECT table_to_xml('pg_stat_user_tables_archive', true, false, '')",
  ])('%s still answers', (sql) => {
    expect(checkStatement(sql, separated), sql).toMatchObject({ ok: true });
    expect(parserAlone(sql, separated), sql).toBeUndefined();
    expect(tokensAlone(sql), sql).toBeUndefined();
  });
});
