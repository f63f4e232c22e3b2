import { HanactlError } from '../../../shared/errors.js';
import { hostAccessAnywhere } from '../../policy/anywhere-rules.js';
import { deniedFunction } from '../../policy/denied-functions.js';
import type { LexicalSyntax } from '../../policy/dialects.js';
import { type Lexed, lex, MAX_COMMENT_DEPTH } from '../../policy/lexer.js';
import { isDummyDual, qualifiersAt, relationBeforeParen } from '../../policy/mysql-names.js';
import { readObjection } from '../../policy/read-rules.js';
import { splitStatements } from '../../policy/skeletonize.js';
import { isPunct, isWord, keywordAt } from '../../policy/tokens.js';
import type { Objection, Token } from '../../policy/types.js';
import { MARIADB_BUILTINS } from './mysql-builtins.js';
import { MYSQL_DIALECT } from './mysql-dialect.js';

/**
 * What a statement reaches on MySQL and MariaDB beyond its own text: the stored functions it
 * calls, the procedures and functions their bodies call, and the functions and views a view it
 * reads calls and reads. The connection looks them up in the server's own records
 * (information_schema.ROUTINES and VIEWS) before the statement runs, and each body is judged here
 * by the statement check's own rules: a routine runs inside the read-only transaction, but KILL,
 * SET GLOBAL and INTO OUTFILE in it are not stopped by it, and a SQL SECURITY DEFINER one runs
 * with its owner's rights. A routine or view whose text the login may not read cannot be judged,
 * so it is refused.
 */

/** A routine or relation by name; `schema` undefined is the schema the name is written in. */
export interface ReachedName {
  readonly schema: string | undefined;
  readonly name: string;
  /**
   * A relation named only as the sequence of NEXTVAL, LASTVAL or SETVAL, or of NEXT / PREVIOUS
   * VALUE FOR: what the sequence functions answer is not the sequence read as a relation
   * (sequenceRefusal).
   */
  readonly sequenceCall?: true;
}

/** What a text names: functions called (and procedures, in a body), relations read, and packages whose members it may call. */
export interface Reached {
  readonly routines: readonly ReachedName[];
  readonly relations: readonly ReachedName[];
  /**
   * The package each qualified call may name a member of: `db.pkg.f()` and `CALL db.pkg.p` call
   * one of package db.pkg; `pkg.f()` one of package pkg of the current database where the
   * text is parsed under sql_mode ORACLE (a session or a body in that mode; `SET STATEMENT` does
   * not change how its own statement is parsed), and stored function f of database pkg otherwise.
   */
  readonly packages: readonly ReachedName[];
  /** Why a reading of the text stops before its end where the server may read on (unreadableOf): names past it are not taken. */
  readonly unreadable?: Unreadable;
  /**
   * In a body, the statement that runs SQL text it builds (`EXECUTE IMMEDIATE`, `PREPARE`,
   * `EXECUTE`): the routines that text calls and the tables it reads cannot be named.
   */
  readonly runsText?: string;
}

/** How deep routines and views are followed; past it the statement is refused (it cannot be judged). */
export const MAX_REACH_DEPTH = 8;
/** How many routines and views one call may reach; past it the statement is refused. */
export const MAX_REACHED = 200;

/** How many of a statement's own names are looked up at most (each may be a view or a stored function). */
export const MAX_CANDIDATES = 4096;

/**
 * Words that a `(` may follow without ever calling a stored function (checked on 10.11: `SELECT
 * w(1)` is a syntax error, or the native meaning, for each).
 */
const NOT_CALLS: ReadonlySet<string> = new Set(
  [
    'IN EXISTS AND OR NOT FROM JOIN AS ON USING VALUES VALUE SELECT WHERE HAVING ALL ANY SOME OVER INTO TABLE WITH',
    'RECURSIVE UNION EXCEPT INTERSECT BY THEN ELSE WHEN CASE RETURN LIKE IS BETWEEN ROW PARTITION',
    'KEY INDEX DISTINCT LIMIT OFFSET WINDOW IGNORE FORCE USE SET XOR DIV DUAL EXPLAIN CALL PROCEDURE',
    'FUNCTION NULL ROWS RANGE PRECEDING FOLLOWING STRAIGHT_JOIN NATURAL LEFT RIGHT INNER OUTER CROSS ORDER GROUP',
    'DO WHILE ELSEIF IF LOOP REPEAT BEGIN END DECLARE DEFAULT FOR MATCH',
    // Types with a length or precision, in a body's DECLARE or a CAST.
    'INT INTEGER TINYINT SMALLINT MEDIUMINT BIGINT DECIMAL DEC NUMERIC FIXED FLOAT DOUBLE REAL BIT CHAR VARCHAR BINARY',
    'VARBINARY TEXT TINYTEXT MEDIUMTEXT LONGTEXT BLOB ENUM DATETIME TIMESTAMP TIME YEAR NCHAR NVARCHAR CHARACTER VARCHAR2',
    'SIGNED UNSIGNED ZEROFILL',
  ].flatMap((line) => line.split(' ')),
);

/**
 * Keywords a `(` follows in a body (`UNTIL (x)`, `AGAINST ('w')`) that also call a stored function
 * of that name in a statement (`SELECT until(1)`): looked up, but not refused as unseen.
 */
const KEYWORD_CALLS: ReadonlySet<string> = new Set(['UNTIL', 'AGAINST', 'RETURNS']);

/**
 * The readings of a text the statement check makes (mysql-dialect.ts), each also under MariaDB's
 * own identifier rules (`2v`, `$v`, `db.order`, `db.123` are names: LexicalSyntax
 * mariadbIdentifiers): names are taken under each, and any reading's finding in a body holds. The
 * statement check's reading splits `1sleep(` into `1` and `sleep(`, which refuses more; the
 * server's reading is the one whose names it looks up.
 */
const READINGS: readonly LexicalSyntax[] = (() => {
  const base = [MYSQL_DIALECT.syntax, ...MYSQL_DIALECT.alternatives];
  const all = [...base, ...base.map((syntax) => ({ ...syntax, executableComments: 'comment' as const }))];
  return all.flatMap((syntax) => [{ ...syntax, mariadbIdentifiers: true }, syntax]);
})();
/** The readings a text needs that holds no backslash, double quote or comment: the first syntax, under both identifier rules. */
const PLAIN_READINGS = 2;
/**
 * sql_mode MSSQL (ANSI_QUOTES among its flags) reads `[name]` as a quoted name, `]]` inside it a
 * `]` (sql_lex.cc MY_LEX_CHAR): a body created in that mode, or a session whose server default it
 * is, reads `[order]` or `[2 v]` as a view.
 */
const MSSQL_READING: LexicalSyntax = (() => {
  const ansi = MYSQL_DIALECT.alternatives[1] ?? MYSQL_DIALECT.syntax;
  return {
    ...ansi,
    quotes: { ...ansi.quotes, '[': { close: ']', kind: 'quoted', backslash: false, doubled: true } },
    mariadbIdentifiers: true,
  };
})();

/** The readings `text` needs: every one where a backslash, a comment (or, in a `body`, a double quote) may read otherwise. */
function readingsOf(text: string, body: boolean): LexicalSyntax[] {
  const every = text.includes('\\') || text.includes('/*') || (body && text.includes('"'));
  const out = every ? [...READINGS] : READINGS.slice(0, PLAIN_READINGS);
  if (text.includes('[')) out.push(MSSQL_READING);
  return out;
}

const nameText = (token: Token | undefined): string | undefined =>
  token && (token.kind === 'word' || token.kind === 'quoted') ? (token.kind === 'word' ? token.shown : token.text) : undefined;

/**
 * The names ending at token `at` (`name`, `schema.name`, `.name`), as the server compares them:
 * one per reading of its qualifier (qualifiersAt), undefined the current database.
 */
function namesEndingAt(tokens: readonly Token[], at: number): ReachedName[] {
  const name = nameText(tokens[at]);
  if (name === undefined) return [];
  return qualifiersAt(tokens, at).map((qualifier) => ({ schema: nameText(qualifier), name }));
}

/** The name ending at `at` under its first reading (a package's qualifier, which `.name` has none of). */
function nameEndingAt(tokens: readonly Token[], at: number): ReachedName | undefined {
  return namesEndingAt(tokens, at)[0];
}

/**
 * The stored functions `tokens` may call: every name followed by `(` but the words that never call
 * one (a keyword may: MariaDB calls a stored function named `of`). A native function's name is no
 * exception: MariaDB runs a stored function of that name for some names its help and manual list
 * as native (`trunc(1)`, `mbrcoveredby(1)`, `point()` on 10.11), and another release may differ;
 * the server's lookup says which exist, and each that does is judged. Procedures after CALL, and
 * those a statement calls by name alone (bareCallAt, sql_mode ORACLE).
 */
function callsIn(tokens: readonly Token[], packages: ReachedName[] = []): ReachedName[] {
  const out: ReachedName[] = [];
  const starts = statementStarts(tokens);
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    const bare = starts.has(k) ? bareCallAt(tokens, k) : undefined;
    if (bare !== undefined) {
      for (const called of namesEndingAt(tokens, bare)) out.push(called);
      const member = packageOf(tokens, bare);
      if (member) packages.push(member);
    }
    if (keywordAt(tokens, k) === 'CALL') {
      let at = k + 1;
      while (isPunct(tokens[at + 1], '.')) at += 2;
      for (const called of namesEndingAt(tokens, at)) out.push(called);
      const member = packageOf(tokens, at);
      if (member) packages.push(member);
      continue;
    }
    if (!isPunct(tokens[k + 1], '(')) continue;
    if (token.kind !== 'word' && token.kind !== 'quoted') continue;
    const qualified = isPunct(tokens[k - 1], '.');
    if (token.kind === 'word' && !qualified && NOT_CALLS.has(token.text)) continue;
    for (const called of namesEndingAt(tokens, k)) out.push(called);
    const member = packageOf(tokens, k);
    if (member) packages.push(member);
  }
  return out;
}

/**
 * Words that, alone before `;`, are a statement of their own in a routine body, not a call of a
 * procedure of that name (checked on 10.11 for each of information_schema.KEYWORDS, written alone
 * as a statement of a sql_mode ORACLE procedure and of a default one: every other keyword that
 * parses there calls the procedure, `deallocate;`, `execute;` and `elseif;` among them).
 */
const ALONE_STATEMENTS: ReadonlySet<string> = new Set([
  'COMMIT',
  'CONTINUE',
  'END',
  'EXIT',
  'NULL',
  'RAISE',
  'RESIGNAL',
  'RETURN',
  'ROLLBACK',
  'SHUTDOWN',
]);

/**
 * Words of NOT_CALLS that call a procedure of that name where a statement of a sql_mode ORACLE body
 * starts with them before `(` (checked on 10.11 as ALONE_STATEMENTS: `text();` calls `text`).
 */
const STATEMENT_CALLS: ReadonlySet<string> = new Set(
  [
    'ANY BIT DATETIME ELSEIF ENUM FIXED FOLLOWING FUNCTION NCHAR NVARCHAR PRECEDING ROW SIGNED SOME TEXT TIME',
    'TIMESTAMP VALUE VARCHAR2 WINDOW YEAR',
  ].flatMap((line) => line.split(' ')),
);

/**
 * The indexes where a statement of a routine body may start: the text's start (and after a
 * sql_mode ORACLE body's leading AS or IS), after `;`, BEGIN (NOT ATOMIC), THEN, ELSE, LOOP and
 * REPEAT (not `END LOOP label`), an ORACLE label `<<label>>`, and a handler's conditions
 * (`CONTINUE HANDLER FOR SQLEXCEPTION p;`). A CASE expression's THEN or ELSE is among them; what
 * follows it is no statement, which bareCallAt tells by the `;` a statement ends with.
 */
function statementStarts(tokens: readonly Token[]): Set<number> {
  const starts = new Set<number>([0]);
  if (isWord(tokens[0], 'AS', 'IS')) starts.add(1);
  for (let k = 0; k < tokens.length; k++) {
    // Not keywordAt: `AS BEGIN` starts an ORACLE body, no alias.
    const word = isWord(tokens[k]) && !isPunct(tokens[k - 1], '.') ? (tokens[k] as Token).text : undefined;
    if (isPunct(tokens[k], ';') || word === 'BEGIN' || word === 'THEN' || word === 'ELSE') starts.add(k + 1);
    else if ((word === 'LOOP' || word === 'REPEAT') && !isWord(tokens[k - 1], 'END')) starts.add(k + 1);
    else if (word === 'ATOMIC' && isWord(tokens[k - 1], 'NOT') && isWord(tokens[k - 2], 'BEGIN')) starts.add(k + 1);
    else if (isPunct(tokens[k], '>') && isPunct(tokens[k + 1], '>') && isPunct(tokens[k - 2], '<') && isPunct(tokens[k - 3], '<'))
      starts.add(k + 2);
    else if (word === 'HANDLER' && isWord(tokens[k + 1], 'FOR')) {
      // FOR SQLEXCEPTION | SQLWARNING | NOT FOUND | SQLSTATE [VALUE] 'xxxxx' | error number | condition, ...
      let j = k + 2;
      for (;;) {
        if (isWord(tokens[j], 'SQLSTATE')) j += isWord(tokens[j + 1], 'VALUE') ? 3 : 2;
        else if (isWord(tokens[j], 'NOT') && isWord(tokens[j + 1], 'FOUND')) j += 2;
        else j++;
        if (!isPunct(tokens[j], ',')) break;
        j++;
      }
      starts.add(j);
    }
  }
  return starts;
}

/** The index of the `)` that closes the `(` at `open`, or the end. */
function closingParen(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    if (isPunct(tokens[k], '(')) depth++;
    else if (isPunct(tokens[k], ')') && --depth === 0) return k;
  }
  return tokens.length;
}

/**
 * Where a statement starting at `k` calls a procedure by its name alone, the index of the name's
 * last part, else undefined. Under sql_mode ORACLE a statement that is only a name, qualified or
 * not, with or without an argument list, calls that procedure (sql_yacc.yy sp_statement's
 * ident_cli_directly_assignable forms, as `CALL` would: `p;`, `db.p;`, `pkg.p(1);`,
 * `db.pkg.p;`); any word before a dot is a name (sql_lex.cc MY_LEX_IDENT_SEP). The default and
 * MSSQL modes have no such statement (checked on 10.11), and no statement of theirs has this
 * form, so every body is read so. An assignment (`x := 1`, `r.a := 1`) or a declaration (`x
 * INT;`) has more after the name; a statement of its own (ALONE_STATEMENTS) is none.
 */
function bareCallAt(tokens: readonly Token[], k: number): number | undefined {
  const first = tokens[k];
  if (first?.kind !== 'word' && first?.kind !== 'quoted') return undefined;
  let at = k;
  while (at - k < 4 && isPunct(tokens[at + 1], '.') && nameText(tokens[at + 2]) !== undefined) at += 2;
  const listed = isPunct(tokens[at + 1], '(');
  const end = listed ? closingParen(tokens, at + 1) + 1 : at + 1;
  if (end < tokens.length && !isPunct(tokens[end], ';')) return undefined;
  if (at === k && first.kind === 'word') {
    if (listed ? NOT_CALLS.has(first.text) && !STATEMENT_CALLS.has(first.text) : ALONE_STATEMENTS.has(first.text)) return undefined;
  }
  return at;
}

/**
 * The first statement of a body that runs SQL text (sql_yacc.yy `EXECUTE IMMEDIATE expr`, `PREPARE
 * name FROM expr`, `EXECUTE name`), as its lead words, else undefined; `execute;` and `prepare();`
 * call procedures of those names (bareCallAt).
 */
function runsTextIn(tokens: readonly Token[]): string | undefined {
  for (const k of statementStarts(tokens)) {
    if (!isWord(tokens[k], 'EXECUTE', 'PREPARE') || isPunct(tokens[k - 1], '.') || bareCallAt(tokens, k) !== undefined) continue;
    if (tokens[k + 1] === undefined || isPunct(tokens[k + 1], '.')) continue;
    return isWord(tokens[k], 'EXECUTE') && isWord(tokens[k + 1], 'IMMEDIATE') ? 'EXECUTE IMMEDIATE' : (tokens[k] as Token).text;
  }
  return undefined;
}

/** The package a call whose name ends at `at` may name a member of: `db.pkg.f` or `pkg.f`, else undefined. */
function packageOf(tokens: readonly Token[], at: number): ReachedName | undefined {
  if (!isPunct(tokens[at - 1], '.') || nameText(tokens[at - 2]) === undefined) return undefined;
  return nameEndingAt(tokens, at - 2);
}

/**
 * MariaDB's reserved words that cannot name a table unquoted (checked on 10.11: `SELECT * FROM w`
 * is a syntax error for each), except after a dot. Any other word may be a relation's name.
 */
const RESERVED: ReadonlySet<string> = new Set(
  [
    'ALL AND AS ASC BETWEEN BY CASE CROSS DESC DISTINCT DIV ELSE EXISTS FALSE FOR FROM GROUP HAVING IN INNER INTERVAL',
    'INTO IS JOIN LEFT LIKE LIMIT MOD NATURAL NOT NULL ON OR ORDER OUTER RECURSIVE REGEXP RLIKE RIGHT SELECT',
    'STRAIGHT_JOIN THEN TRUE UNION UPDATE USING WHEN WHERE WITH XOR LOCK KEY INDEX FORCE IGNORE USE SET EXCEPT',
    'INTERSECT VALUES DEFAULT COLLATE BINARY CHAR CONVERT PARTITION RANGE ROWS OVER OFFSET SEPARATOR HIGH_PRIORITY',
    'SQL_CALC_FOUND_ROWS SQL_SMALL_RESULT SQL_BIG_RESULT CURRENT_USER CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP',
    'LOCALTIME LOCALTIMESTAMP UTC_DATE UTC_TIME UTC_TIMESTAMP LEADING TRAILING BOTH',
  ].flatMap((line) => line.split(' ')),
);

/**
 * Every name in the text that may name a relation, wherever the grammar puts it (a FROM list, a
 * parenthesised join, a subquery, after a table function): each word that is not reserved and
 * each quoted name, in each schema its qualifier may name (`db.v`, `.v` and `db . v`:
 * qualifiersAt), except variables, calls and the unquoted DUAL. A name before `(` is a relation
 * where the grammar puts a table there (`INSERT INTO t (a)`: relationBeforeParen). Most are
 * columns and aliases; the server's lookup says which are views, and a name missed here would be
 * a view read unjudged.
 */
function relationsIn(tokens: readonly Token[]): ReachedName[] {
  const out: ReachedName[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    if (token.kind !== 'word' && token.kind !== 'quoted') continue;
    // After a dot the server reads any word as a name (sql_lex.cc MY_LEX_IDENT_SEP): `db.order`.
    if (token.kind === 'word' && RESERVED.has(token.text) && !isPunct(tokens[k - 1], '.')) continue;
    if (isPunct(tokens[k - 1], '@') || isDummyDual(tokens, k)) continue;
    if (isPunct(tokens[k + 1], '(') && !relationBeforeParen(tokens, k)) continue;
    const name = nameText(token);
    if (name === undefined) continue;
    for (const qualifier of qualifiersAt(tokens, k)) {
      const named = { schema: nameText(qualifier), name };
      out.push(sequenceCallAt(tokens, k, qualifier !== undefined) ? { ...named, sequenceCall: true } : named);
    }
  }
  return out;
}

/**
 * Whether the name ending at `at`, read with a schema qualifier or not (`qualified`), is the
 * sequence a sequence function names (sql_yacc.yy: `NEXTVAL '(' table_ident ')'`, LASTVAL the
 * same, `SETVAL '(' table_ident ','`, `NEXT VALUE FOR table_ident`, `PREVIOUS VALUE FOR
 * table_ident`). A qualified `db.nextval(x)` calls a stored function, and x is no sequence.
 */
function sequenceCallAt(tokens: readonly Token[], at: number, qualified: boolean): boolean {
  const start = qualified ? at - 2 : isPunct(tokens[at - 1], '.') ? at - 1 : at;
  if (isWord(tokens[start - 1], 'FOR') && isWord(tokens[start - 2], 'VALUE') && isWord(tokens[start - 3], 'NEXT', 'PREVIOUS')) return true;
  if (!isPunct(tokens[start - 1], '(') || isPunct(tokens[start - 3], '.')) return false;
  if (isWord(tokens[start - 2], 'NEXTVAL', 'LASTVAL')) return isPunct(tokens[at + 1], ')');
  return isWord(tokens[start - 2], 'SETVAL') && isPunct(tokens[at + 1], ',');
}

/**
 * Adds each name once, as written: two spellings the server may take for one routine are both
 * looked up, since only the server's comparison tells which names are the same.
 */
function unique(names: readonly ReachedName[]): ReachedName[] {
  const seen = new Map<string, ReachedName>();
  for (const name of names) {
    const key = `${name.schema === undefined ? '\u0001' : name.schema}\u0000${name.name}`;
    // Named once otherwise than as a sequence function's sequence, it is read as a relation.
    const known = seen.get(key);
    if (!known) seen.set(key, name);
    else if (known.sequenceCall && !name.sequenceCall) seen.set(key, { schema: known.schema, name: known.name });
  }
  return [...seen.values()];
}

/**
 * True when an unqualified `name` is one of MariaDB's native functions by its exact name (or a
 * keyword a body writes before `(`). Alone it lets nothing run unjudged: a name a DEFINER routine
 * calls that the server's lookup does not return passes only when it is one of these and the login
 * sees every routine of that schema (everyRoutineQuery), so that no stored function of that name
 * is there; any other such name is refused, as a routine the login may not see (or a UDF, which
 * information_schema.ROUTINES does not list).
 */
export function probablyNative(name: ReachedName): boolean {
  return name.schema === undefined && (MARIADB_BUILTINS.has(name.name.toLowerCase()) || KEYWORD_CALLS.has(name.name.toUpperCase()));
}

/**
 * One row when the login sees every routine of `schema` in information_schema.ROUTINES, none
 * otherwise: it may read mysql.proc (a global, mysql.* or mysql.proc SELECT grant; MariaDB lists
 * every routine then), or holds SHOW CREATE ROUTINE (MariaDB 11.3 and later, globally or on the
 * schema) or SHOW_ROUTINE (MySQL). Only the login's own grants count, not a role's: where this
 * shows too little, what the login cannot see is refused.
 */
export function everyRoutineQuery(schema: string): { readonly sql: string; readonly values: string[] } {
  const user = 'CURRENT_USER()';
  const host = `SUBSTRING_INDEX(${user}, '@', -1)`;
  const grantee = `CONCAT('''', SUBSTRING(${user}, 1, CHAR_LENGTH(${user}) - CHAR_LENGTH(${host}) - 1), '''@''', ${host}, '''')`;
  const sql = [
    `SELECT 1 AS sees FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ${grantee} AND PRIVILEGE_TYPE IN ('SELECT', 'SHOW CREATE ROUTINE', 'SHOW_ROUTINE')`,
    `SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ${grantee} AND ((TABLE_SCHEMA = 'mysql' AND PRIVILEGE_TYPE = 'SELECT') OR (TABLE_SCHEMA = ? AND PRIVILEGE_TYPE = 'SHOW CREATE ROUTINE'))`,
    `SELECT 1 FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ${grantee} AND TABLE_SCHEMA = 'mysql' AND TABLE_NAME = 'proc' AND PRIVILEGE_TYPE = 'SELECT'`,
  ].join('\nUNION ALL\n');
  return { sql: `${sql}\nLIMIT 1`, values: [schema] };
}

/** What `sql` names, under every reading the statement check makes of it. */
export function reachedBy(sql: string): Reached {
  const routines: ReachedName[] = [];
  const relations: ReachedName[] = [];
  const packages: ReachedName[] = [];
  const stops: LexStop[] = [];
  for (const syntax of readingsOf(sql, false)) {
    const { tokens, ...stop } = lex(sql, syntax);
    stops.push(stop);
    // Appended one by one: a long text names more than a spread's arguments may hold.
    for (const name of callsIn(tokens, packages)) routines.push(name);
    for (const name of relationsIn(tokens)) relations.push(name);
  }
  // The statement check refuses what its own readings stop in; these readings are more (MariaDB's
  // identifier rules, sql_mode MSSQL's [name]), and one may stop where the server reads on.
  const unreadable = unreadableOf(stops);
  return { routines: unique(routines), relations: unique(relations), packages: unique(packages), ...(unreadable ? { unreadable } : {}) };
}

/**
 * The refusal of a statement that one of the readings of its names stops in (Reached.unreadable):
 * the stored functions and views it names past that point would not be judged.
 */
export function statementUnreadableRefusal(unreadable: Unreadable): HanactlError {
  return refusal(
    unreadable.rule,
    `Refused: read as the server may read it (under sql_mode MSSQL, or by MariaDB's own rules for names), the text holds ${unreadable.reason}, so the stored functions and views it reaches cannot all be judged.`,
    'Remove it and send the statement again.',
  );
}

/** A routine, package or view as the server records it. */
export interface Definition {
  readonly kind: 'FUNCTION' | 'PROCEDURE' | 'VIEW' | 'PACKAGE' | 'PACKAGE BODY' | 'TRIGGER';
  readonly schema: string;
  readonly name: string;
  /** DEFINER or INVOKER. */
  readonly security: string;
  /** The body or view definition; null or empty when the login may not read it. */
  readonly body: string | null;
  /** A trigger's table, `schema.name`. */
  readonly table?: string;
  /** The sql_mode a routine or trigger was stored under (its SQL_MODE column), by which the server parses it. */
  readonly sqlMode?: string | null;
}

/** What judging one definition found. */
export interface Judged {
  /** What it does that no read-only call runs, as a phrase ("KILL controls the server ..."), or undefined. */
  readonly does?: string;
  /** Where rows are separated: what it reads that tells hidden rows apart (the executor's statistics), as a phrase. */
  readonly separatedDoes?: string;
  /** It assigns a context variable (`@mcp_...`). */
  readonly setsContext?: string;
  /**
   * A context variable written where an assignment cannot be told from a comparison (`@mcp_x =`
   * after a comma or THEN): refused as if assigned.
   */
  readonly mayAssignContext?: string;
  /**
   * The sql_mode whose grammar or names the body is parsed by and the statement check does not
   * model (storedModeOf), so that where the call carries context values it is refused whole.
   */
  readonly storedMode?: 'ORACLE' | 'MSSQL';
  /**
   * A session or user variable it assigns (`sql_mode`, `@x`), which outlives the call: any target
   * of SET, `:=`, INTO or GET DIAGNOSTICS that is not a local variable the body declares.
   */
  readonly changesSession?: string;
  /** Its text reads a table (FROM, JOIN, TABLE). */
  readonly readsTables: boolean;
  /** What it calls and reads, unqualified names in its own schema. */
  readonly reached: Reached;
  /**
   * Why its text cannot be judged whole: a reading of it the lexer stops in, and may be how the
   * server reads it. Then what follows that point is not judged, so the routine or view is refused.
   */
  readonly unreadable?: Unreadable;
}

/** Why a body or view definition cannot be judged whole, with the statement check's rule for it. */
export interface Unreadable {
  readonly rule: 'ambiguous-text' | 'unterminated' | 'too-complex' | 'nul-character';
  /** What the text holds, as a phrase ("a quote inside an optimizer hint, which ..."). */
  readonly reason: string;
}

/** What of a reading tells where and why its lexing stopped. */
type LexStop = Pick<Lexed, 'ambiguous' | 'commentTooDeep' | 'nul' | 'unterminated'>;

/**
 * Why the readings of a text do not judge it whole, or undefined. The server parsed a stored text
 * when it was created, and parses it the same way when it runs (sql_mode as it was then), and runs
 * a statement only if it parses: a reading that ends inside a literal or comment is not the
 * server's, but one that reads it whole must be among them. Text whose reading depends on what the
 * policy cannot know (a quote inside an optimizer hint, which MySQL's hint scanner reads as a
 * literal past the `*\/`), comments nested too deep, or a NUL character where the server may stop
 * early, may be read either way: found in any reading, it makes the text unreadable.
 */
function unreadableOf(lexings: readonly LexStop[]): Unreadable | undefined {
  for (const lexed of lexings) {
    if (lexed.ambiguous)
      return { rule: 'ambiguous-text', reason: `${lexed.ambiguous}, which the database may read differently than this check does` };
    if (lexed.commentTooDeep) return { rule: 'too-complex', reason: `comments nested more than ${MAX_COMMENT_DEPTH} deep` };
    if (lexed.nul)
      return { rule: 'nul-character', reason: 'a NUL character outside a string, where the server may end the text or a comment early' };
  }
  const stopped = lexings.find((lexed) => lexed.unterminated);
  if (stopped && lexings.every((lexed) => lexed.unterminated))
    return { rule: 'unterminated', reason: `text that ends inside ${stopped.unterminated}, however the server reads it` };
  return undefined;
}

const phrase = (objection: Objection): string => {
  const sentence = objection.message.slice(0, objection.message.length - objection.hint.length).trim();
  return sentence.replace(/^Refused: /, '').replace(/[.]$/, '');
};

const isContextVariable = (tokens: readonly Token[], k: number): boolean =>
  isPunct(tokens[k], '@') &&
  !isPunct(tokens[k - 1], '@') &&
  /^mcp_/i.test(nameText(tokens[k + 1]) ?? (tokens[k + 1]?.kind === 'string' ? (tokens[k + 1] as Token).text : ''));

/**
 * Words after which `@mcp_x = ...` is an expression, so a comparison: a condition or a value
 * (WHERE, ON, HAVING, WHEN, IF, ELSEIF, ELSIF, WHILE, UNTIL, RETURN, SELECT, and the logical
 * operators). After any other word, a comma at the top level or THEN, `=` may be a SET list's or
 * GET DIAGNOSTICS' assignment, which the raw scan cannot tell apart.
 */
const COMPARES_AFTER: ReadonlySet<string> = new Set(
  'WHERE AND OR NOT XOR ON HAVING WHEN IF ELSEIF ELSIF WHILE UNTIL RETURN SELECT'.split(' '),
);
/** Operators after which `@mcp_x = ...` is an operand, so a comparison. */
const OPERATORS_BEFORE = new Set(['(', '=', '<', '>', '!', '+', '-', '*', '/', '%', '&', '|', '^', '~']);

/** The index of the `(` enclosing token `k`, or -1 at the top level. */
function enclosingParen(tokens: readonly Token[], k: number): number {
  let depth = 0;
  for (let j = k - 1; j >= 0; j--) {
    if (isPunct(tokens[j], ')')) depth++;
    else if (isPunct(tokens[j], '(') && depth-- === 0) return j;
  }
  return -1;
}

/** The index of the first token of the variable or name ending at `end` (`@x`, `a`, `r.a`), or -1. */
function targetStart(tokens: readonly Token[], end: number): number {
  if (isPunct(tokens[end - 1], '@') && (nameText(tokens[end]) !== undefined || tokens[end]?.kind === 'string')) return end - 1;
  if (nameText(tokens[end]) === undefined) return -1;
  let at = end;
  while (isPunct(tokens[at - 1], '.') && nameText(tokens[at - 2]) !== undefined) at -= 2;
  return at;
}

/**
 * The raw layer for context values, whatever reading found a body's statement starts: every
 * `@mcp_...` (any quoting, ASCII case-insensitive) that is assigned — before `:=`; before `=` as a
 * SET target; in an INTO list (`INTO a, @mcp_x`); as a direct argument of CALL, which an OUT or
 * INOUT parameter assigns — is `setsContext`. One before `=` where the scan cannot tell an
 * assignment from a comparison (after a top-level comma, THEN, DIAGNOSTICS or another word that
 * no condition follows) is `mayAssignContext`.
 */
function contextAssignments(tokens: readonly Token[], found: { setsContext?: string; mayAssignContext?: string }): void {
  for (let k = 0; k < tokens.length; k++) {
    if (!isContextVariable(tokens, k)) continue;
    const variable = userVariable(tokens, k);
    const after = tokens[k + 2];
    if (isPunct(after, ':') && isPunct(tokens[k + 3], '=')) {
      found.setsContext ??= variable;
      continue;
    }
    // An INTO list: back over `, target` pairs to INTO.
    let back = k;
    while (isPunct(tokens[back - 1], ',')) {
      const start = targetStart(tokens, back - 2);
      if (start < 0) break;
      back = start;
    }
    if (keywordAt(tokens, back - 1) === 'INTO') {
      found.setsContext ??= variable;
      continue;
    }
    // A direct argument of CALL name(...).
    const open = enclosingParen(tokens, k);
    if (
      open > 0 &&
      (isPunct(tokens[k - 1], '(') || isPunct(tokens[k - 1], ',')) &&
      (isPunct(tokens[k + 2], ',') || isPunct(tokens[k + 2], ')'))
    ) {
      const name = targetStart(tokens, open - 1);
      if (name >= 0 && !isPunct(tokens[name], '@') && keywordAt(tokens, name - 1) === 'CALL') {
        found.setsContext ??= variable;
        continue;
      }
    }
    if (!isPunct(after, '=')) continue;
    const before = tokens[k - 1];
    if (keywordAt(tokens, k - 1) === 'SET') {
      found.setsContext ??= variable;
      continue;
    }
    const word = keywordAt(tokens, k - 1);
    if (word !== undefined && COMPARES_AFTER.has(word)) continue;
    if (before?.kind === 'punct' && OPERATORS_BEFORE.has(before.text)) continue;
    // A comma inside parentheses separates arguments or a row's values, never a SET list's targets.
    if (isPunct(before, ',') && open >= 0) continue;
    found.mayAssignContext ??= variable;
  }
}

/** Index of the first of `words` at depth 0 from `from`, skipping nested CASE ... END, or the end. */
function findWord(tokens: readonly Token[], from: number, words: readonly string[]): number {
  let depth = 0;
  let cases = 0;
  for (let k = from; k < tokens.length; k++) {
    if (isPunct(tokens[k], '(')) depth++;
    else if (isPunct(tokens[k], ')')) depth--;
    else if (depth === 0) {
      const word = keywordAt(tokens, k);
      if (word === 'CASE') cases++;
      else if (word === 'END' && cases > 0) cases--;
      else if (cases === 0 && word && words.includes(word)) return k;
    }
  }
  return tokens.length;
}

const SELECT_TOKEN: Token = { kind: 'word', text: 'SELECT', shown: 'SELECT', spaced: false, opaque: false };

/** The refusal of an expression (a condition, a RETURN, a DEFAULT): a query it holds that locks, writes or stores. */
function expressionObjection(tokens: readonly Token[]): Objection | undefined {
  return tokens.length > 0 ? readObjection([SELECT_TOKEN, ...tokens], MYSQL_DIALECT) : undefined;
}

/** `INTO a, b` targets from `at` (the INTO); returns the index after them, noting a context variable. */
function intoTargets(tokens: readonly Token[], at: number, found: { setsContext?: string; changesSession?: string }): number {
  let j = at + 1;
  for (;;) {
    if (isPunct(tokens[j], '@')) {
      if (isContextVariable(tokens, j)) found.setsContext ??= `@${nameText(tokens[j + 1]) ?? tokens[j + 1]?.text}`;
      found.changesSession ??= userVariable(tokens, j);
      j += 2;
    } else if (nameText(tokens[j]) !== undefined) j++;
    else break;
    if (!isPunct(tokens[j], ',')) break;
    j++;
  }
  return j;
}

/** What judging a body found so far; the first finding of each kind wins. */
interface Found {
  does?: string;
  setsContext?: string;
  mayAssignContext?: string;
  changesSession?: string;
  /** The local variables in scope at each token of the body (scopesOf), upper case. */
  readonly locals: ReadonlyMap<Token, ReadonlySet<string>>;
  separatedDoes?: string;
  /** The schema the body's unqualified names are in. */
  readonly schema: string;
  /** A trigger's body, where `NEW.col` and `OLD.col` are the row's columns, not variables. */
  readonly trigger?: boolean;
}

/** One statement of a routine body, after its labels and control flow; the first finding wins. */
function judgeStatement(tokens: readonly Token[], found: Found): void {
  let i = 0;
  for (let guard = 0; guard <= tokens.length && i < tokens.length && !found.does; guard++) {
    const word = isWord(tokens[i]) ? (tokens[i] as Token).text : undefined;
    if (nameText(tokens[i]) !== undefined && isPunct(tokens[i + 1], ':') && !isPunct(tokens[i + 2], '=')) {
      i += 2;
      continue;
    }
    switch (word) {
      case 'BEGIN':
        i += isWord(tokens[i + 1], 'NOT') && isWord(tokens[i + 2], 'ATOMIC') ? 3 : 1;
        continue;
      case 'END':
        return;
      case 'ELSE':
      case 'LOOP':
      case 'REPEAT':
        i++;
        continue;
      case 'IF':
      case 'ELSEIF':
      case 'WHILE':
      case 'WHEN': {
        const end = findWord(tokens, i + 1, ['THEN', 'DO']);
        const refused = expressionObjection(tokens.slice(i + 1, end));
        if (refused) found.does = phrase(refused);
        i = end + 1;
        continue;
      }
      case 'FOR': {
        // FOR rec IN cursor_or_query | FOR i IN low .. high DO (MariaDB 10.3+).
        const end = findWord(tokens, i + 1, ['DO']);
        const range = findWord(tokens, i + 1, ['IN']);
        const refused = expressionObjection(tokens.slice(Math.min(range + 1, end), end));
        if (refused) found.does = phrase(refused);
        i = end + 1;
        continue;
      }
      case 'CASE': {
        const end = findWord(tokens, i + 1, ['WHEN']);
        const refused = expressionObjection(tokens.slice(i + 1, end));
        if (refused) found.does = phrase(refused);
        i = end;
        continue;
      }
      case 'UNTIL':
      case 'RETURN': {
        const end = word === 'UNTIL' ? findWord(tokens, i + 1, ['END']) : tokens.length;
        const refused = expressionObjection(tokens.slice(i + 1, end));
        if (refused) found.does = phrase(refused);
        return;
      }
      case 'DECLARE': {
        const handler = tokens.findIndex((t, k) => k > i && isWord(t, 'HANDLER'));
        if (handler > 0 && isWord(tokens[handler + 1], 'FOR')) {
          let j = handler + 2;
          for (;;) {
            if (isWord(tokens[j], 'SQLSTATE')) j += isWord(tokens[j + 1], 'VALUE') ? 3 : 2;
            else if (isWord(tokens[j], 'NOT') && isWord(tokens[j + 1], 'FOUND')) j += 2;
            else j++;
            if (!isPunct(tokens[j], ',')) break;
            j++;
          }
          i = j;
          continue;
        }
        const cursor = tokens.findIndex((t, k) => k > i && isWord(t, 'CURSOR'));
        if (cursor > 0) {
          const query = findWord(tokens, cursor, ['FOR']);
          i = query + 1;
          continue;
        }
        const refused = expressionObjection(tokens.slice(i + 1));
        if (refused) found.does = phrase(refused);
        return;
      }
      case 'SET':
        judgeSet(tokens, i, found);
        return;
      case 'CALL':
        callArguments(tokens, i, found);
        return;
      case 'OPEN':
      case 'CLOSE':
      case 'LEAVE':
      case 'ITERATE':
      case 'SIGNAL':
      case 'RESIGNAL':
        return;
      case 'FETCH':
      case 'GET': {
        // FETCH c INTO targets; GET DIAGNOSTICS target = item.
        const into = findWord(tokens, i, ['INTO']);
        if (into < tokens.length) intoTargets(tokens, into, found);
        for (let k = i; k < tokens.length; k++) {
          if (isContextVariable(tokens, k) && isPunct(tokens[k + 2], '=')) found.setsContext ??= `@${nameText(tokens[k + 1])}`;
          if (
            word === 'GET' &&
            isPunct(tokens[k], '@') &&
            !isPunct(tokens[k - 1], '@') &&
            !isPunct(tokens[k + 1], '@') &&
            isPunct(tokens[k + 2], '=')
          )
            found.changesSession ??= userVariable(tokens, k);
        }
        return;
      }
      default: {
        // A query: its INTO of local variables stores nothing outside the routine; INTO @mcp_* does.
        const kept: Token[] = [];
        for (let k = i; k < tokens.length; k++) {
          if (keywordAt(tokens, k) === 'INTO' && !isWord(tokens[k + 1], 'OUTFILE', 'DUMPFILE')) {
            k = intoTargets(tokens, k, found) - 1;
            continue;
          }
          kept.push(tokens[k] as Token);
        }
        // The rules that look at a statement's lead (SHOW GRANTS, SHOW PROCESSLIST, SHOW STATUS) too.
        const refused = MYSQL_DIALECT.catalogRules?.(kept, false, found.schema) ?? readObjection(kept, MYSQL_DIALECT);
        if (refused) found.does = phrase(refused);
        const statistics = MYSQL_DIALECT.separatedRowsRules?.(kept, found.schema);
        if (statistics) found.separatedDoes ??= phrase(statistics);
        return;
      }
    }
  }
}

/** `SET` in a body: local and session variables pass; GLOBAL or PERSIST settings, passwords and roles do not. */
function judgeSet(tokens: readonly Token[], at: number, found: Found): void {
  if (isWord(tokens[at + 1], 'PASSWORD', 'ROLE', 'TRANSACTION') || (isWord(tokens[at + 1], 'DEFAULT') && isWord(tokens[at + 2], 'ROLE'))) {
    found.does = `SET ${(tokens[at + 1] as Token).text} changes the session or a login`;
    return;
  }
  if (isWord(tokens[at + 1], 'STATEMENT')) {
    const inner = findWord(tokens, at + 2, ['FOR']);
    judgeStatement(tokens.slice(inner + 1), found);
    return;
  }
  let depth = 0;
  let target = true;
  for (let k = at + 1; k < tokens.length; k++) {
    if (isPunct(tokens[k], '(')) depth++;
    else if (isPunct(tokens[k], ')')) depth--;
    else if (depth === 0 && isPunct(tokens[k], ',')) {
      target = true;
      continue;
    }
    if (!target) continue;
    target = false;
    const global =
      isWord(tokens[k], 'GLOBAL', 'PERSIST', 'PERSIST_ONLY') ||
      (isPunct(tokens[k], '@') && isPunct(tokens[k + 1], '@') && isWord(tokens[k + 2], 'GLOBAL', 'PERSIST', 'PERSIST_ONLY'));
    if (global) {
      found.does = 'SET GLOBAL changes a server-wide setting, which outlives the call';
      return;
    }
    if (isContextVariable(tokens, k)) found.setsContext ??= `@${nameText(tokens[k + 1]) ?? tokens[k + 1]?.text}`;
    // In a trigger, `SET NEW.col = ...` assigns the row being written (sql_yacc.yy trg_new_row).
    if (found.trigger && isWord(tokens[k], 'NEW', 'OLD') && isPunct(tokens[k + 1], '.')) continue;
    found.changesSession ??= sessionTarget(tokens, k, found.locals.get(tokens[k] as Token) ?? new Set());
  }
}

/**
 * `CALL p(...)` in a body: a user variable passed as an argument is assigned when an OUT or INOUT
 * parameter takes it (sql_yacc.yy; `CALL p(@q)` sets @q however it is quoted), so every `@name`
 * in the argument list counts as assigned.
 */
function callArguments(tokens: readonly Token[], at: number, found: Found): void {
  for (let k = at + 1; k < tokens.length; k++) {
    if (!isPunct(tokens[k], '@') || isPunct(tokens[k - 1], '@') || isPunct(tokens[k + 1], '@') || tokens[k + 1] === undefined) continue;
    if (isContextVariable(tokens, k)) found.setsContext ??= userVariable(tokens, k);
    found.changesSession ??= userVariable(tokens, k);
  }
}

/** `@name` at `k` as shown, a user variable. */
const userVariable = (tokens: readonly Token[], k: number): string => `@${nameText(tokens[k + 1]) ?? tokens[k + 1]?.text ?? ''}`;

/**
 * The variable a SET target at `k` changes outside the call, or undefined for a local variable:
 * the server resolves a bare name to a local variable (or parameter) first, then to a system
 * variable (sql_yacc.yy option_value_following_option_type, set_var); `SESSION`/`LOCAL name`,
 * `@@name`, `@@session.name` are system variables, `@name` a user variable, `NAMES` and
 * `CHARACTER SET` the connection's character sets. A parameter cannot be told from a system
 * variable without the parameter list, so assigning one is refused too.
 */
function sessionTarget(tokens: readonly Token[], k: number, locals: ReadonlySet<string>): string | undefined {
  if (isPunct(tokens[k], '@')) {
    if (!isPunct(tokens[k + 1], '@')) return userVariable(tokens, k);
    const scoped = isWord(tokens[k + 2], 'SESSION', 'LOCAL') && isPunct(tokens[k + 3], '.');
    return nameText(tokens[k + (scoped ? 4 : 2)]) ?? '@@';
  }
  if (isWord(tokens[k], 'SESSION', 'LOCAL') && nameText(tokens[k + 1]) !== undefined && !isPunct(tokens[k + 1], '=')) {
    return nameText(tokens[k + 1]);
  }
  const name = nameText(tokens[k]);
  if (name === undefined) return undefined;
  if (isWord(tokens[k], 'NAMES', 'CHARSET') || (isWord(tokens[k], 'CHARACTER') && isWord(tokens[k + 1], 'SET'))) return name;
  return locals.has(name.toUpperCase()) ? undefined : name;
}

/** The names `DECLARE` at `k` makes local variables: `DECLARE a, b T`, not a handler, cursor or condition. */
function declaredAt(tokens: readonly Token[], k: number): string[] {
  const names: string[] = [];
  let j = k + 1;
  while (nameText(tokens[j]) !== undefined) {
    names.push((nameText(tokens[j]) as string).toUpperCase());
    if (!isPunct(tokens[j + 1], ',')) break;
    j += 2;
  }
  if (isWord(tokens[j + 1], 'CURSOR', 'CONDITION', 'HANDLER') || isWord(tokens[k + 1], 'CONTINUE', 'EXIT', 'UNDO')) return [];
  return names;
}

/**
 * The local variables in scope at each token of a body, as the server resolves a name by lexical
 * scope (sp_pcontext): a DECLAREd name from its DECLARE to the END of the BEGIN block that holds it
 * (a handler's block too), a FOR loop's variable from FOR to its END FOR. A name outside them is the
 * system variable. `END IF`, `END LOOP`, `END WHILE`, `END REPEAT` close no scope, and a CASE (an
 * expression or a statement) is closed by its own END. Under sql_mode ORACLE a DECLARE section
 * before BEGIN belongs to that BEGIN's block.
 */
function scopesOf(tokens: readonly Token[]): Map<Token, ReadonlySet<string>> {
  type Frame = { kind: 'block' | 'declare' | 'for' | 'case'; readonly names: Set<string> };
  const stack: Frame[] = [{ kind: 'block', names: new Set() }];
  const out = new Map<Token, ReadonlySet<string>>();
  let current: ReadonlySet<string> = new Set();
  const refresh = (): void => {
    current = new Set(stack.flatMap((frame) => [...frame.names]));
  };
  const pop = (kind: Frame['kind']): void => {
    // A DECLARE section no BEGIN took ends with the block that holds it.
    if (kind === 'block') while (stack.length > 1 && stack.at(-1)?.kind === 'declare') stack.pop();
    if (stack.length > 1 && stack.at(-1)?.kind === kind) stack.pop();
    refresh();
  };
  // The lead word of the statement before the one at hand, and of the one at hand.
  let previousLead: string | undefined;
  let lead: string | undefined;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    out.set(token, current);
    if (isPunct(token, ';')) {
      previousLead = lead;
      lead = undefined;
      continue;
    }
    const word = keywordAt(tokens, k);
    lead ??= word ?? '';
    if (word === 'BEGIN') {
      const top = stack.at(-1) as Frame;
      if (top.kind === 'declare') top.kind = 'block';
      else stack.push({ kind: 'block', names: new Set() });
      previousLead = 'BEGIN';
      lead = undefined;
      if (isWord(tokens[k + 1], 'NOT') && isWord(tokens[k + 2], 'ATOMIC')) {
        out.set(tokens[k + 1] as Token, current);
        out.set(tokens[k + 2] as Token, current);
        k += 2;
      }
    } else if (word === 'CASE') stack.push({ kind: 'case', names: new Set() });
    else if (word === 'END') {
      if (isWord(tokens[k + 1], 'FOR')) pop('for');
      else if (isWord(tokens[k + 1], 'CASE')) pop('case');
      else if (!isWord(tokens[k + 1], 'IF', 'LOOP', 'WHILE', 'REPEAT')) pop(stack.at(-1)?.kind === 'case' ? 'case' : 'block');
      if (isWord(tokens[k + 1])) {
        out.set(tokens[k + 1] as Token, current);
        k++;
      }
    } else if (word === 'FOR' && nameText(tokens[k + 1]) !== undefined && isWord(tokens[k + 2], 'IN')) {
      stack.push({ kind: 'for', names: new Set([(nameText(tokens[k + 1]) as string).toUpperCase()]) });
      refresh();
    } else if (word === 'DECLARE' && lead === 'DECLARE') {
      // A declaration after BEGIN or another DECLARE is its block's; any other opens an ORACLE section.
      if (previousLead !== 'BEGIN' && previousLead !== 'DECLARE' && stack.at(-1)?.kind !== 'declare')
        stack.push({ kind: 'declare', names: new Set() });
      for (const name of declaredAt(tokens, k)) (stack.at(-1) as Frame).names.add(name);
      refresh();
    }
  }
  return out;
}

/**
 * Judges a routine's body or a view's definition by the statement check's rules on a read-only
 * connection: the built-ins it calls (GET_LOCK, SLEEP, NEXTVAL, LAST_INSERT_ID(n), ...), host file
 * access (INTO OUTFILE, LOAD_FILE; and the words OUTFILE and DUMPFILE anywhere in its text), the catalogs of credentials, and each statement of a body after
 * its control flow (KILL, SET GLOBAL, FLUSH, writes, DDL, PREPARE/EXECUTE, DO, HANDLER, XA, ... are
 * not reads). A stored function cannot run SQL text it builds, so its body is all it runs.
 */
export function judgeDefinition(definition: Definition): Judged {
  // The server parses a body under the sql_mode it was created with (NO_BACKSLASH_ESCAPES,
  // ANSI_QUOTES), so it is judged under every reading the statement check makes: any reading's
  // finding holds, and what any reading calls or reads is reached.
  const body = definition.body ?? '';
  const lexings = readingsOf(body, true).map((syntax) => lex(body, syntax));
  const all = lexings.map((lexed) => judgeTokens(definition, lexed.tokens));
  const unreadable = unreadableOf(lexings);
  const pick = <K extends 'does' | 'separatedDoes' | 'setsContext' | 'mayAssignContext' | 'changesSession'>(key: K): Judged[K] =>
    all.find((j) => j[key])?.[key];
  // The raw-text layer (host-file-words.ts) as for a statement: on the body's text, whatever its tokens.
  const raw = MYSQL_DIALECT.rawTextRule?.(body);
  const does = pick('does') ?? (raw ? phrase(raw) : undefined);
  const separatedDoes = pick('separatedDoes');
  const setsContext = pick('setsContext');
  const mayAssignContext = setsContext ? undefined : pick('mayAssignContext');
  const changesSession = pick('changesSession');
  const storedMode = storedModeOf(definition.sqlMode);
  const runsText = all.find((j) => j.reached.runsText)?.reached.runsText;
  return {
    ...(does ? { does } : {}),
    ...(separatedDoes ? { separatedDoes } : {}),
    ...(setsContext ? { setsContext } : {}),
    ...(mayAssignContext ? { mayAssignContext } : {}),
    ...(storedMode ? { storedMode } : {}),
    ...(changesSession ? { changesSession } : {}),
    ...(unreadable ? { unreadable } : {}),
    readsTables: all.some((j) => j.readsTables),
    reached: {
      routines: unique(all.flatMap((j) => j.reached.routines)),
      relations: unique(all.flatMap((j) => j.reached.relations)),
      packages: unique(all.flatMap((j) => j.reached.packages)),
      ...(runsText ? { runsText } : {}),
    },
  };
}

/**
 * The sql_mode a routine or trigger was stored under whose reading the statement check does not
 * make: ORACLE, whose grammar (sql_yacc.yy built with ORACLE) starts statements after ELSIF ...
 * THEN, `<<label>>`, FOR/WHILE ... LOOP, EXCEPTION WHEN ... THEN and at a procedure's name alone,
 * and MSSQL (ANSI_QUOTES with `[name]` quoting). The server parses the body under it on every run.
 */
export function storedModeOf(sqlMode: string | null | undefined): 'ORACLE' | 'MSSQL' | undefined {
  const flags = (sqlMode ?? '').toUpperCase().split(',');
  if (flags.includes('ORACLE')) return 'ORACLE';
  return flags.includes('MSSQL') ? 'MSSQL' : undefined;
}

/** judgeDefinition under one reading of the body. */
function judgeTokens(definition: Definition, tokens: readonly Token[]): Judged {
  const found: Found = { schema: definition.schema, locals: scopesOf(tokens), ...(definition.kind === 'TRIGGER' ? { trigger: true } : {}) };
  const anywhere =
    deniedFunction(tokens, false) ?? hostAccessAnywhere(tokens) ?? MYSQL_DIALECT.catalogRules?.(tokens, false, definition.schema);
  if (anywhere) found.does = phrase(anywhere);
  contextAssignments(tokens, found);
  for (let k = 0; k + 2 < tokens.length; k++) {
    if (isPunct(tokens[k], '@') && !isPunct(tokens[k - 1], '@') && isPunct(tokens[k + 2], ':') && isPunct(tokens[k + 3], '='))
      found.changesSession ??= userVariable(tokens, k);
  }
  if (definition.kind !== 'VIEW') {
    // Every statement, past the first that is no read: a call that is no read-only one (a write
    // where rows are separated) refuses on what a later statement assigns, and a sql_mode ORACLE
    // body's leading AS is no read.
    for (const statement of splitStatements(tokens)) {
      const { does: _first, ...rest } = found;
      const each: Found = rest;
      judgeStatement(statement, each);
      found.does ??= each.does;
      found.setsContext ??= each.setsContext;
      found.mayAssignContext ??= each.mayAssignContext;
      found.changesSession ??= each.changesSession;
      found.separatedDoes ??= each.separatedDoes;
    }
  }
  const statistics = MYSQL_DIALECT.separatedRowsRules?.(tokens, definition.schema);
  if (statistics) found.separatedDoes ??= phrase(statistics);
  const readsTables = tokens.some((_, k) => {
    const word = keywordAt(tokens, k);
    return word === 'FROM' || word === 'JOIN' || (word === 'TABLE' && k === 0);
  });
  const packages: ReachedName[] = [];
  const runsText = definition.kind === 'VIEW' ? undefined : runsTextIn(tokens);
  const reached = {
    routines: unique(callsIn(tokens, packages)),
    relations: unique(relationsIn(tokens)),
    packages: unique(packages),
    ...(runsText ? { runsText } : {}),
  };
  const { schema: _schema, locals: _locals, trigger: _trigger, ...findings } = found;
  return { ...findings, readsTables, reached };
}

/** How a reached routine or view is shown: `schema.name()` for a routine. */
export function shownName(definition: Pick<Definition, 'kind' | 'schema' | 'name' | 'table'>): string {
  if (isPackage(definition)) return `the package ${definition.schema}.${definition.name}`;
  if (definition.kind === 'TRIGGER') return `the trigger ${definition.schema}.${definition.name} on ${definition.table ?? 'its table'}`;
  return definition.kind === 'VIEW' ? `the view ${definition.schema}.${definition.name}` : `${definition.schema}.${definition.name}()`;
}

/** A refusal whose message ends with its hint, as the statement check's do. */
function refusal(rule: string, sentence: string, hint: string): HanactlError {
  return new HanactlError('STATEMENT_REFUSED', `${sentence} ${hint}`, { rule, hint });
}

const KIND_WORD = {
  FUNCTION: 'stored function',
  PROCEDURE: 'stored procedure',
  VIEW: 'view',
  PACKAGE: 'package',
  'PACKAGE BODY': 'package',
  TRIGGER: 'trigger',
} as const;

/** Whether the server's record is a package or its body (MariaDB, created under sql_mode ORACLE). */
export const isPackage = (definition: Pick<Definition, 'kind'>): boolean =>
  definition.kind === 'PACKAGE' || definition.kind === 'PACKAGE BODY';

/** `path` lists what led there, the statement's own name first: " (through db.f(), the view db.v)". */
const through = (path: readonly string[]): string => (path.length > 0 ? ` (reached through ${path.join(', then ')})` : '');

/** The refusal of a routine whose body does what no read-only call runs. */
export function routineRefusal(definition: Definition, path: readonly string[], does: string): HanactlError {
  const what = `${KIND_WORD[definition.kind]} ${shownName(definition).replace(/^the (view|trigger) /, '')}`;
  return refusal(
    'stored-routine',
    `Refused: the statement runs the ${what}${through(path)}, and its ${definition.kind === 'VIEW' ? 'definition' : 'body'} holds what a read-only call does not run: ${does}. A read-only transaction does not stop it inside a routine.`,
    `Ask a person to run it, or to change the ${KIND_WORD[definition.kind]} so that it only reads.`,
  );
}

/**
 * The refusal of a routine or view whose text no reading judges whole (Judged.unreadable): what
 * follows the point where the lexer stopped, at any depth, cannot be judged.
 */
export function unreadableRefusal(definition: Definition, path: readonly string[], unreadable: Unreadable): HanactlError {
  const text = definition.kind === 'VIEW' ? 'definition' : 'body';
  return refusal(
    unreadable.rule,
    `Refused: the statement ${definition.kind === 'VIEW' ? 'reads' : 'runs'} ${shownName(definition)}${through(path)}, whose ${text} holds ${unreadable.reason}, so what it does cannot be judged.`,
    `Ask a person to remove that from the ${KIND_WORD[definition.kind]}'s ${text}, or to run the statement.`,
  );
}

/** What lets `user` read routine bodies, per server. */
const readBodies = (user: string, schema: string): string =>
  `Ask a person to let ${user} read routine bodies (MariaDB before 11.3: GRANT SELECT ON mysql.proc TO ${user}; MariaDB 11.3 and later: GRANT SHOW CREATE ROUTINE ON ${schema}.* TO ${user}; MySQL 8.0.20 and later: GRANT SHOW_ROUTINE ON *.* TO ${user})`;

/** The refusal, where rows are separated, of a routine or view that reads the executor's statistics. */
export function statisticsRefusal(definition: Definition, path: readonly string[], does: string): HanactlError {
  return refusal(
    'executor-statistics',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, whose ${definition.kind === 'VIEW' ? 'definition' : 'body'} reads what tells rows hidden from this connection apart: ${does}.`,
    'Select from the views made for this connection, without the status or statistics tables.',
  );
}

/**
 * The refusal of a routine whose body the login may not read: whatever its SQL SECURITY, what it
 * does, and the DEFINER routines it calls, cannot be judged.
 */
export function hiddenBodyRefusal(definition: Definition, path: readonly string[], user: string): HanactlError {
  const definer = definition.security === 'DEFINER';
  return refusal(
    'stored-routine',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, a SQL SECURITY ${definer ? 'DEFINER' : 'INVOKER'} ${KIND_WORD[definition.kind]} whose body this login may not read, so what it does${definer ? " with its owner's rights" : ", and what the routines it calls do with their owners' rights,"} cannot be judged.`,
    `${readBodies(user, definition.schema)}${definer ? ', or to make it SQL SECURITY INVOKER' : ''}.`,
  );
}

/**
 * The refusal of a view whose definition the login may not read (information_schema.VIEWS shows it
 * only to the view's definer or to a login holding SELECT and SHOW VIEW on it): the functions it
 * calls and the views it reads, with its owner's rights when it is SQL SECURITY DEFINER, cannot be
 * judged.
 */
export function hiddenViewRefusal(definition: Definition, path: readonly string[], user: string): HanactlError {
  const definer = definition.security === 'DEFINER';
  const view = `${definition.schema}.${definition.name}`;
  return refusal(
    'stored-routine',
    `Refused: the statement reads ${shownName(definition)}${through(path)}, a SQL SECURITY ${definer ? 'DEFINER' : 'INVOKER'} view whose definition this login may not read, so the functions it calls and the views it reads${definer ? " with its owner's rights" : ''} cannot be judged.`,
    `Ask a person to let ${user} read it (GRANT SHOW VIEW ON ${view} TO ${user}), so that hanactl can judge it.`,
  );
}

/**
 * The refusal of a trigger a write fires whose body the login may not read: information_schema.TRIGGERS
 * lists a table's triggers to a login holding any write privilege on it, but shows their body and
 * DEFINER only to one holding TRIGGER on the table (checked on 10.11). A trigger runs with its
 * DEFINER's rights, so what it reads and calls cannot be judged.
 */
export function hiddenTriggerRefusal(definition: Definition, path: readonly string[], user: string): HanactlError {
  const table = definition.table ?? `${definition.schema}.<table>`;
  return refusal(
    'stored-routine',
    `Refused: the statement writes ${table} and so runs ${shownName(definition)}${through(path)}, whose body this login may not read, so what it does with its owner's rights cannot be judged.`,
    `Ask a person to let ${user} read it (GRANT TRIGGER ON ${table} TO ${user}), or to run the statement.`,
  );
}

/** The refusal of a routine, view or trigger whose text the login may not read. */
export function hiddenDefinitionRefusal(definition: Definition, path: readonly string[], user: string): HanactlError {
  if (definition.kind === 'TRIGGER') return hiddenTriggerRefusal(definition, path, user);
  return definition.kind === 'VIEW' ? hiddenViewRefusal(definition, path, user) : hiddenBodyRefusal(definition, path, user);
}

/**
 * Whether SQL text may delete or change existing rows (DELETE, UPDATE, REPLACE, INSERT ... ON
 * DUPLICATE KEY UPDATE), by two readings, either of which says yes:
 * - its tokens, under every reading the statement check makes (an executable comment's text as
 *   code, its version's digits glued to the keyword, as in `/*!100000DELETE`): a DELETE or UPDATE
 *   keyword, but for an UPDATE whose previous token is FOR (a locking read: a comment between
 *   them is no token, so `# FOR` before a line's UPDATE is not one) in a text with no `SET
 *   STATEMENT ... FOR`, which runs the statement after FOR; and a REPLACE no `(` follows (the
 *   string function);
 * - its words anywhere, strings and comments too, which errs on the side of yes (any UPDATE
 *   counts where the word STATEMENT occurs).
 * `body`: the text is a stored routine's, trigger's or view's (double quotes may read otherwise).
 */
export function changesRows(sql: string, body = false): boolean {
  // `SET STATEMENT var = value FOR <statement>` runs the statement after FOR: there FOR UPDATE is an UPDATE.
  const statementFor = /STATEMENT/i.test(sql);
  if (/\bDELETE\b|\bREPLACE\b(?!\s*\()/i.test(sql)) return true;
  if ((statementFor ? /UPDATE/i : /(?<!\bFOR\s+)\bUPDATE\b/i).test(sql)) return true;
  if (!/DELETE|UPDATE|REPLACE/i.test(sql)) return false;
  return readingsOf(sql, body).some((syntax) => {
    const { tokens } = lex(sql, syntax);
    const word = (i: number, text: string): boolean => tokens[i]?.kind === 'word' && tokens[i]?.text === text;
    const setStatement = tokens.some((_, i) => word(i, 'SET') && word(i + 1, 'STATEMENT'));
    return tokens.some((token, i) => {
      if (token.kind !== 'word') return false;
      if (token.text === 'DELETE') return true;
      if (token.text === 'UPDATE') return setStatement || !word(i - 1, 'FOR');
      return token.text === 'REPLACE' && !(tokens[i + 1]?.kind === 'punct' && tokens[i + 1]?.text === '(');
    });
  });
}

/**
 * The refusal, where rows are separated, of a statement that deletes or changes rows and names an
 * InnoDB table with an index: a foreign key of a table the login may not see may reference it
 * with ON DELETE / ON UPDATE CASCADE or SET NULL, which InnoDB carries out past any separation,
 * and information_schema shows the login no key of a table it holds no privilege on.
 */
export function fkActionRefusal(table: { readonly schema: string; readonly name: string }, path: readonly string[]): HanactlError {
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: the statement deletes or changes rows and names ${table.schema}.${table.name}${through(path)}, an InnoDB table with an index, which a foreign key of another table may reference with ON DELETE or ON UPDATE CASCADE or SET NULL. InnoDB carries those actions into the referencing table's rows past the separation of rows by context values (a key of a table this login may not read is not shown to it), so the write could delete or change other callers' rows.`,
    {
      rule: 'fk-action',
      hint: 'Ask a person to run this write on a connection without context names.',
    },
  );
}

/**
 * The refusal, where rows are separated, of a MariaDB sequence read as a relation (its
 * `next_not_cached_value` and the rest, directly or through a view or body): the position moves
 * with every caller's NEXTVAL, so it counts the inserts of rows context values hide. The sequence
 * functions (NEXTVAL, LASTVAL, SETVAL, NEXT / PREVIOUS VALUE FOR) are no such read: LASTVAL reports
 * the session's own value, and NEXTVAL what an INSERT's generated key shows.
 */
export function sequenceRefusal(sequence: { readonly schema: string; readonly name: string }, path: readonly string[]): HanactlError {
  return refusal(
    'executor-statistics',
    `Refused: ${sequence.schema}.${sequence.name}${through(path)} is a sequence: read as a table, its position moves with every caller's NEXTVAL, and on this connection it counts the rows that context values hide from you. LASTVAL() and PREVIOUS VALUE FOR report this session's own values.`,
    'Count the rows you can see with SELECT count(*) instead; a person can read the sequence in a database client.',
  );
}

/**
 * The refusal, on a write where rows are separated, of an updatable view the statement may write
 * through: the write runs the triggers of the view's tables, which the server lists only to a login
 * holding a write privilege on those tables, so they cannot all be found and judged.
 */
export function updatableViewRefusal(view: Pick<Definition, 'schema' | 'name'>, path: readonly string[]): HanactlError {
  return refusal(
    'stored-routine',
    `Refused: the statement may write through the updatable view ${view.schema}.${view.name}${through(path)}, and a write through a view runs the triggers of its tables, which this login may not see, with their owners' rights, so what it runs cannot be judged.`,
    'Write to the table itself, or ask a person to run the statement.',
  );
}

/** The refusal of a name a DEFINER routine calls that the login may not see (so not judged). */
export function unseenRefusal(name: ReachedName, path: readonly string[], user: string): HanactlError {
  const shown = `${name.schema === undefined ? '' : `${name.schema}.`}${name.name}()`;
  return refusal(
    'stored-routine',
    `Refused: the statement runs ${shown}${through(path)} with a SQL SECURITY DEFINER owner's rights, and this login may not see that routine, so what it does cannot be judged.`,
    `${readBodies(user, name.schema ?? 'its schema')}.`,
  );
}

/** The refusal where rows are separated: a DEFINER routine reading tables reads them past the separation. */
export function definerReadsRefusal(definition: Definition, path: readonly string[]): HanactlError {
  return refusal(
    'stored-routine',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, which reads tables with a SQL SECURITY DEFINER owner's rights, past the view that separates this connection's rows by its context values.`,
    'Select from the views made for this connection instead.',
  );
}

/** The refusal of a routine that assigns a context variable. */
export function setsContextRefusal(definition: Definition, path: readonly string[], variable: string): HanactlError {
  return refusal(
    'session-change',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, which assigns ${variable}, a context value that only hanactl sets, for each call.`,
    'Call routines that only read context values.',
  );
}

/**
 * The query for which of `functions` (as the server records them) declare an OUT or INOUT
 * parameter (MariaDB 10.8 and later): rows of schema `s`, name `n`, the first such parameter `p`
 * and its mode `m`. information_schema.PARAMETERS lists a routine's parameters to a login that
 * may run it or is its definer, even where its body is hidden (checked on 10.11). Undefined for
 * no functions.
 */
export function outParametersQuery(
  functions: readonly Pick<Definition, 'schema' | 'name'>[],
): { readonly sql: string; readonly values: string[] } | undefined {
  if (functions.length === 0) return undefined;
  const values = functions.flatMap((f) => [f.schema, f.name]);
  const each = functions.map(() => '(SPECIFIC_SCHEMA = ? AND SPECIFIC_NAME = ?)').join(' OR ');
  return {
    sql: `SELECT SPECIFIC_SCHEMA AS s, SPECIFIC_NAME AS n, PARAMETER_NAME AS p, PARAMETER_MODE AS m FROM information_schema.PARAMETERS WHERE ROUTINE_TYPE = 'FUNCTION' AND PARAMETER_MODE IN ('OUT', 'INOUT') AND (${each}) ORDER BY ORDINAL_POSITION`,
    values,
  };
}

/**
 * The refusal, where the call carries context values, of a stored function that declares an OUT
 * or INOUT parameter: it writes back into the variable its caller passes there (`SET r =
 * f(@mcp_customer_id, ...)` in a body, `SET` or `DO` in a statement), whatever statement of its
 * body assigns the parameter, so a caller may change a context value through it.
 */
export function outParameterRefusal(definition: Definition, path: readonly string[], parameter: string, mode: string): HanactlError {
  return refusal(
    'session-change',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, a stored function with the ${mode} parameter ${parameter}, which writes back into the variable its caller passes there, and a caller may pass a context value (@mcp_...), one that only hanactl sets, for each call.`,
    'Call functions whose parameters are all IN, or ask a person to run it.',
  );
}

/**
 * The refusal, where the call carries context values, of a routine or trigger stored under a
 * sql_mode whose grammar the statement check does not read (storedModeOf): where its statements
 * start, and so what they assign, cannot be told.
 */
export function storedModeRefusal(definition: Definition, path: readonly string[], mode: 'ORACLE' | 'MSSQL'): HanactlError {
  return refusal(
    'stored-routine',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, whose body was stored under sql_mode=${mode} and is parsed by that mode's grammar, which this check does not read, so what it assigns and reads cannot be judged where the call carries context values.`,
    `Ask a person to run it, or to create the ${KIND_WORD[definition.kind]} again under the default sql_mode.`,
  );
}

/** The refusal of a routine that writes a context variable where an assignment cannot be told from a comparison. */
export function mayAssignContextRefusal(definition: Definition, path: readonly string[], variable: string): HanactlError {
  return refusal(
    'session-change',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, which writes ${variable} before \`=\` where an assignment cannot be told from a comparison, and a context value is one that only hanactl sets, for each call.`,
    `Ask a person to write the comparison as \`value = ${variable}\`.`,
  );
}

/** The refusal of a routine whose body changes a session or user variable, which outlives the call. */
export function sessionChangeRefusal(definition: Definition, path: readonly string[], variable: string): HanactlError {
  return refusal(
    'session-change',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, which assigns ${variable}, a session or user variable that outlives the call, and a call changes nothing in the session.`,
    'Ask a person to change the routine so that it assigns only local variables it DECLAREs.',
  );
}

/**
 * The refusal of a call that may name a member of a package that exists: a package's routines are
 * written under sql_mode ORACLE, whose reading the statement check does not make, so they are not
 * judged.
 */
export function packageRefusal(definition: Definition, path: readonly string[]): HanactlError {
  return refusal(
    'stored-routine',
    `Refused: the statement may call a routine of ${shownName(definition)}${through(path)}, and routines in a package are not judged, so what it does cannot be told.`,
    'Ask a person to run it, or call stored functions and procedures that are not in a package.',
  );
}

/**
 * The refusal, where rows are separated, of a routine that runs SQL text it builds: what that text
 * calls and reads, with whose rights, cannot be judged before it runs.
 */
export function runsTextRefusal(definition: Definition, path: readonly string[], statement: string): HanactlError {
  return refusal(
    'stored-routine',
    `Refused: the statement runs ${shownName(definition)}${through(path)}, whose body runs SQL text it builds (${statement}), so the routines that text calls and the tables it reads cannot be judged.`,
    'Ask a person to run it, or to change the routine so that it runs no EXECUTE IMMEDIATE, PREPARE or EXECUTE.',
  );
}

/** The refusal when routines and views reach further than is followed. */
export function tooFarRefusal(): HanactlError {
  return refusal(
    'too-complex',
    `Refused: the routines and views this statement reaches nest more than ${MAX_REACH_DEPTH} levels deep, or number more than ${MAX_REACHED}, so they cannot all be judged.`,
    'Select from the tables they read instead.',
  );
}

/** A name to look up: a routine, or a relation that may be a view. */
export interface Lookup {
  /**
   * A package is one whose members a qualified call may name (Reached.packages); `writes` a
   * relation a write may write: the triggers on it, and the view if it is an updatable one.
   */
  readonly kind: 'routine' | 'relation' | 'package' | 'writes';
  readonly name: ReachedName;
}

/**
 * One query for the definitions of `lookups`, unqualified names in the session's database, whose
 * rows carry the lookup's index (`i`), so that every row the server's own comparison of names
 * returns counts as reached and nothing is matched again here. A routine name compares as MariaDB
 * resolves a call (mysql.proc's utf8mb3_general_ci: `kíll_q` calls `kill_q`); a view by its
 * equality on VIEWS, which the server answers from that view's definition file alone, as it opens
 * a table. Each view name is its own branch. So is each routine name, unless `routinesAsOne`
 * (MariaDB 10.6 and later, which has JSON_TABLE): then a schema's routine names are one branch,
 * one bound JSON array of [index, name] joined to that schema's ROUTINES rows by the same
 * comparison, since each branch reads mysql.proc whole into its own temporary table (about 1 ms
 * per name under load, where a call's names are mostly native functions').
 */
export function definitionsQuery(
  lookups: readonly Lookup[],
  options: { readonly routinesAsOne?: boolean; readonly sequences?: boolean } = {},
): { readonly sql: string; readonly values: string[] } {
  const values: string[] = [];
  const parts: string[] = [];
  const schemaOf = (name: ReachedName): string => {
    if (name.schema === undefined) return 'DATABASE()';
    values.push(name.schema);
    return '?';
  };
  const grouped = new Map<string, { readonly schema: string | undefined; readonly names: [number, string][] }>();
  lookups.forEach((lookup, i) => {
    if (lookup.kind === 'routine' && options.routinesAsOne) {
      const key = lookup.name.schema === undefined ? '' : `=${lookup.name.schema}`;
      let group = grouped.get(key);
      if (!group) {
        group = { schema: lookup.name.schema, names: [] };
        grouped.set(key, group);
      }
      // A lone surrogate goes as the driver sends a bound string (U+FFFD), and stays valid JSON.
      group.names.push([i, lookup.name.name.replace(/\p{Cs}/gu, '\uFFFD')]);
      return;
    }
    const schema = schemaOf(lookup.name);
    values.push(lookup.name.name);
    const routine = `SELECT ${i} AS i, ROUTINE_TYPE AS kind, ROUTINE_SCHEMA AS s, ROUTINE_NAME AS n, SECURITY_TYPE AS sec, SQL_MODE AS mode, ROUTINE_DEFINITION AS body FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ${schema} AND ROUTINE_NAME = CONVERT(? USING utf8mb4) COLLATE utf8mb4_general_ci`;
    if (lookup.kind === 'writes') {
      // A trigger runs with its DEFINER's rights (SECURITY_TYPE has no meaning for it).
      parts.push(
        `SELECT ${i} AS i, 'TRIGGER' AS kind, TRIGGER_SCHEMA AS s, TRIGGER_NAME AS n, 'DEFINER' AS sec, SQL_MODE AS mode, ACTION_STATEMENT AS body FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ${schema} AND EVENT_OBJECT_TABLE = ?`,
      );
      parts.push(
        // Fails closed: the server shows a login a blank IS_UPDATABLE for a view calling a function it
        // may not EXECUTE (the context recipe's), so only an explicit NO, or TEMPTABLE (which no
        // write goes through), counts as not updatable.
        `SELECT ${i} AS i, 'UPDATABLE VIEW' AS kind, TABLE_SCHEMA AS s, TABLE_NAME AS n, SECURITY_TYPE AS sec, NULL AS mode, NULL AS body FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ${schemaOf(lookup.name)} AND TABLE_NAME = ? AND COALESCE(IS_UPDATABLE, '') <> 'NO' AND COALESCE(ALGORITHM, '') <> 'TEMPTABLE'`,
      );
      values.push(lookup.name.name);
      // A table a foreign key may reference, whose ON DELETE / ON UPDATE action the login cannot
      // see (REFERENTIAL_CONSTRAINTS lists only keys of tables it holds a privilege on): InnoDB,
      // with an index (a referenced table needs one on the referenced columns). fkActionRefusal.
      parts.push(
        `SELECT ${i} AS i, 'KEYED INNODB' AS kind, t.TABLE_SCHEMA AS s, t.TABLE_NAME AS n, NULL AS sec, NULL AS mode, NULL AS body FROM information_schema.TABLES AS t WHERE t.TABLE_SCHEMA = ${schemaOf(lookup.name)} AND t.TABLE_NAME = ? AND t.ENGINE = 'InnoDB' AND EXISTS (SELECT 1 FROM information_schema.STATISTICS AS x WHERE x.TABLE_SCHEMA = t.TABLE_SCHEMA AND x.TABLE_NAME = t.TABLE_NAME)`,
      );
      values.push(lookup.name.name);
      return;
    }
    parts.push(
      lookup.kind === 'routine'
        ? routine
        : lookup.kind === 'package'
          ? `${routine} AND ROUTINE_TYPE IN ('PACKAGE', 'PACKAGE BODY')`
          : `SELECT ${i} AS i, 'VIEW' AS kind, TABLE_SCHEMA AS s, TABLE_NAME AS n, SECURITY_TYPE AS sec, NULL AS mode, VIEW_DEFINITION AS body FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ${schema} AND TABLE_NAME = ?`,
    );
    if (options.sequences && lookup.kind === 'relation' && !lookup.name.sequenceCall) {
      // Where rows are separated: a sequence read as a relation (sequenceRefusal).
      parts.push(
        `SELECT ${i} AS i, 'SEQUENCE' AS kind, TABLE_SCHEMA AS s, TABLE_NAME AS n, NULL AS sec, NULL AS mode, NULL AS body FROM information_schema.TABLES WHERE TABLE_SCHEMA = ${schemaOf(lookup.name)} AND TABLE_NAME = ? AND TABLE_TYPE = 'SEQUENCE'`,
      );
      values.push(lookup.name.name);
    }
  });
  const branches: string[] = [];
  const groupValues: string[] = [];
  for (const { schema, names } of grouped.values()) {
    groupValues.push(JSON.stringify(names));
    if (schema !== undefined) groupValues.push(schema);
    // The schema's equality lets the server read that schema's routines alone; LONGTEXT keeps a
    // name whole, whatever its length, as the bound string of a branch of its own.
    branches.push(
      `SELECT c.i AS i, r.ROUTINE_TYPE AS kind, r.ROUTINE_SCHEMA AS s, r.ROUTINE_NAME AS n, r.SECURITY_TYPE AS sec, r.SQL_MODE AS mode, r.ROUTINE_DEFINITION AS body FROM information_schema.ROUTINES AS r JOIN JSON_TABLE(?, '$[*]' COLUMNS(i INT PATH '$[0]', n LONGTEXT CHARACTER SET utf8mb4 PATH '$[1]')) AS c ON r.ROUTINE_NAME = c.n COLLATE utf8mb4_general_ci WHERE r.ROUTINE_SCHEMA = ${schema === undefined ? 'DATABASE()' : '?'}`,
    );
  }
  return { sql: [...branches, ...parts].join('\nUNION ALL\n'), values: [...groupValues, ...values] };
}

/**
 * Past this many relation names, the lookup first asks which of them name a table or view at all
 * (existingNamesQuery). Each branch of definitionsQuery is its own information_schema read, and a
 * union of hundreds of them takes the server seconds (a 2000-column select list: 6 to 11 s on
 * MariaDB 10.11), while a few names are answered fastest by their own branches.
 */
export const NARROW_OVER = 32;

/**
 * Whether the server answers existingNamesQuery: MariaDB from 10.6, which has JSON_TABLE (checked
 * on 10.11). Elsewhere every name is looked up by its own branch.
 */
export function narrowsNames(flavour: 'mariadb' | 'mysql', release: readonly [number, number, number]): boolean {
  const [major, minor] = release;
  return flavour === 'mariadb' && (major > 10 || (major === 10 && minor >= 6));
}

/**
 * Which of `lookups`' relation names (past NARROW_OVER of them) name a table or view in their
 * schema, unqualified names in the session's database: rows of `i`, the lookup's index. One branch
 * per schema, its names one bound JSON array of [index, name] read by JSON_TABLE and compared with
 * information_schema.TABLES' names, which the server reads from that schema's directory alone
 * (it opens no table for them). The names answer case- and accent-insensitively
 * (utf8mb3_general_ci), so every name definitionsQuery's exact lookup of a view finds is among
 * them; only they go on to it. Routine names are all looked up by definitionsQuery. Undefined when
 * there are too few names for the pass to pay.
 */
export function existingNamesQuery(lookups: readonly Lookup[]): { readonly sql: string; readonly values: string[] } | undefined {
  const groups = new Map<string, { readonly schema: string | undefined; readonly names: [number, string][] }>();
  let relations = 0;
  lookups.forEach((lookup, i) => {
    if (lookup.kind !== 'relation') return;
    relations++;
    const key = lookup.name.schema === undefined ? '' : `=${lookup.name.schema}`;
    let group = groups.get(key);
    if (!group) {
      group = { schema: lookup.name.schema, names: [] };
      groups.set(key, group);
    }
    group.names.push([i, lookup.name.name]);
  });
  if (relations <= NARROW_OVER) return undefined;
  const values: string[] = [];
  const parts: string[] = [];
  for (const { schema, names } of groups.values()) {
    values.push(JSON.stringify(names));
    if (schema !== undefined) values.push(schema);
    // A name longer than the column cannot be an identifier (64 characters at most), nor can one
    // holding a character past U+FFFF (the server refuses it in a name).
    parts.push(
      `SELECT c.i FROM JSON_TABLE(?, '$[*]' COLUMNS(i INT PATH '$[0]', n VARCHAR(2048) CHARACTER SET utf8mb3 PATH '$[1]')) AS c WHERE c.n IN (SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ${schema === undefined ? 'DATABASE()' : '?'})`,
    );
  }
  return { sql: parts.join('\nUNION ALL\n'), values };
}
