import { isPunct, isWord } from './tokens.js';
import type { Token } from './types.js';

/**
 * How MySQL and MariaDB read the qualifier of a name, for every rule that reads a relation or
 * routine name from their text (the statement check's rules and the walk of bodies and views).
 *
 * The grammar (sql_yacc.yy table_ident) has `ident`, `ident '.' ident` and `'.' ident`, the last
 * a name of the current database ("For Delphi"): `FROM .v`, `FROM . v`, `JOIN .v`, a comment or spaces around the dot. Which
 * of these a word before a dot starts is the scanner's (sql_lex.cc MY_LEX_IDENT): a word written
 * right before the dot, with an identifier character right after it, is a name whatever it spells
 * (`FROM.v` names the table v of the database `FROM`), and any word after a dot is one
 * (MY_LEX_IDENT_SEP); otherwise a keyword is a keyword (`FROM .v`, and JOIN right before a dot and a quoted name), and a non-reserved
 * one is read either way by where it stands. Checked on MariaDB 10.11.
 */

/** Where a qualifier is the current database: no qualifier, or the dot of `.name`. */
export const CURRENT_DATABASE = undefined;

/**
 * The qualifiers the name whose last part is token `at` may have, each the token naming its
 * schema (or table, for a column), or undefined for the current database: one reading where the
 * text says which, both where the word before the dot may be a keyword (the schema by its name and
 * the current database), so that a rule judging each reading misses none.
 */
export function qualifiersAt(tokens: readonly Token[], at: number): readonly (Token | undefined)[] {
  const dot = tokens[at - 1];
  if (!isPunct(dot, '.')) return [CURRENT_DATABASE];
  const before = tokens[at - 2];
  if (before?.kind === 'quoted') return [before];
  if (before?.kind !== 'word') return [CURRENT_DATABASE];
  const name = tokens[at];
  const joined = dot?.spaced === false && name?.kind === 'word' && !name.spaced;
  if (joined || isPunct(tokens[at - 3], '.')) return [before];
  return [before, CURRENT_DATABASE];
}

/**
 * Whether the name ending at `at` may be the current database's `name` (lower case) itself: it
 * has that reading (qualifiersAt), nothing after it reads it as a qualifier or a call.
 */
export function mayBeUnqualified(tokens: readonly Token[], at: number): boolean {
  return qualifiersAt(tokens, at).includes(CURRENT_DATABASE) && !isPunct(tokens[at + 1], '.') && !isPunct(tokens[at + 1], '(');
}

/**
 * Whether the unquoted word DUAL at `at` is the grammar's dummy table (`FROM DUAL`, which reads no
 * table); a quoted dual and one after a dot are names of tables or views.
 */
export function isDummyDual(tokens: readonly Token[], at: number): boolean {
  return isWord(tokens[at], 'DUAL') && !isPunct(tokens[at - 1], '.') && !isPunct(tokens[at + 1], '.');
}

/**
 * Words after which a name followed by `(` names a relation, not a function: INSERT and REPLACE's
 * table before its column list (`INSERT INTO t (a)`, `INSERT t(a)`, `REPLACE LOW_PRIORITY t (a)`,
 * sql_yacc.yy insert_table), a table after TABLE (`LOAD DATA ... INTO TABLE t (a)`, `CREATE TABLE
 * t (...)`), and a FROM list's or UPDATE's (where no function may stand).
 */
const RELATION_BEFORE_PAREN = [
  'INTO',
  'TABLE',
  'FROM',
  'JOIN',
  'STRAIGHT_JOIN',
  'UPDATE',
  'INSERT',
  'REPLACE',
  'LOW_PRIORITY',
  'DELAYED',
  'HIGH_PRIORITY',
  'IGNORE',
];

/**
 * Whether the name ending at `at`, followed by `(`, names a relation (RELATION_BEFORE_PAREN before
 * it, under either reading of its qualifier: `REPLACE .t (a)`, `INSERT INTO db.t (a)`).
 */
export function relationBeforeParen(tokens: readonly Token[], at: number): boolean {
  const dotted = isPunct(tokens[at - 1], '.');
  return qualifiersAt(tokens, at).some((qualifier) => {
    const start = qualifier !== CURRENT_DATABASE ? at - 2 : dotted ? at - 1 : at;
    return isWord(tokens[start - 1], ...RELATION_BEFORE_PAREN);
  });
}
