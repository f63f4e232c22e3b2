import { describe, expect, it } from 'vitest';
import { MYSQL_DIALECT } from '../../../../daemon/engines/mysql/mysql-dialect.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { isDummyDual, qualifiersAt, relationBeforeParen } from '../../../../daemon/policy/mysql-names.js';

/** The readings of the qualifier of `sql`'s last name token: each schema, `.` for the current database. */
function readings(sql: string): string[] {
  const { tokens } = lex(sql, { ...MYSQL_DIALECT.syntax, mariadbIdentifiers: true });
  let at = tokens.length - 1;
  while (tokens[at]?.kind !== 'word' && tokens[at]?.kind !== 'quoted') at--;
  return qualifiersAt(tokens, at).map((q) => (q === undefined ? '.' : q.kind === 'quoted' ? q.text : q.shown));
}

describe("MariaDB's reading of a name's qualifier (sql_yacc.yy table_ident, sql_lex.cc MY_LEX_IDENT)", () => {
  it('reads a lone dot as the current database', () => {
    for (const sql of [
      'SELECT * FROM .v',
      'SELECT * FROM . v',
      'SELECT * FROM /* c */ . /* d */ v',
      'SELECT * FROM t, .v',
      'SELECT * FROM (.v',
    ])
      expect(readings(sql), sql).toContain('.');
  });

  it('reads a word right against the dot, with a name right after it, as the schema whatever it spells', () => {
    expect(readings('SELECT * FROM shop.v')).toEqual(['shop']);
    expect(readings('SELECT * FROM t JOIN.v')).toEqual(['JOIN']);
    expect(readings('SELECT * FROM `shop` . v')).toEqual(['shop']);
    expect(readings('SELECT a.b.c')).toEqual(['b']);
    expect(readings('SELECT * FROM v')).toEqual(['.']);
  });

  it('reads a word spaced from the dot, or before a quoted name, both ways: a keyword is read as one by where it stands', () => {
    expect(readings('SELECT * FROM t JOIN.`v`')).toEqual(['JOIN', '.']);
    expect(readings('SELECT * FROM t JOIN .v')).toEqual(['JOIN', '.']);
    expect(readings('SELECT * FROM status . v')).toEqual(['status', '.']);
  });

  it('takes only the unquoted DUAL as the dummy table, and a name before a column list after INSERT or INTO as a relation', () => {
    const at = (sql: string, word: string) => {
      const { tokens } = lex(sql, { ...MYSQL_DIALECT.syntax, mariadbIdentifiers: true });
      return { tokens, k: tokens.findIndex((t) => t.text.toUpperCase() === word.toUpperCase()) };
    };
    const dual = (sql: string) => {
      const { tokens, k } = at(sql, 'dual');
      return isDummyDual(tokens, k);
    };
    expect(dual('SELECT 1 FROM DUAL')).toBe(true);
    expect(dual('SELECT 1 FROM `dual`')).toBe(false);
    expect(dual('SELECT 1 FROM .dual')).toBe(false);
    const relation = (sql: string) => {
      const { tokens, k } = at(sql, 'wv');
      return relationBeforeParen(tokens, k);
    };
    for (const sql of [
      'INSERT INTO wv (a)',
      'INSERT wv(a)',
      'REPLACE .wv (a)',
      'INSERT IGNORE INTO db.wv (a)',
      'LOAD DATA INFILE "f" INTO TABLE wv (a)',
    ])
      expect(relation(sql), sql).toBe(true);
    expect(relation('SELECT wv(1)')).toBe(false);
  });
});
