import type { ReferencedFunctionRule } from './function-references.js';
import type { Objection, PolicyOptions, StatementReferences, Token, Verdict } from './types.js';

/**
 * A second check with the engine's own parser, run when the token rules passed with `kind`.
 * `embedded` checks SQL text a function runs, whole (both checks, bounded).
 */
export type ParserCheck = (
  sql: string,
  options: PolicyOptions,
  kind: 'read' | 'write',
  embedded: (sql: string) => Verdict,
  found?: (references: StatementReferences) => void,
) => Objection | undefined;

/** What one opening quote character starts. */
export interface QuoteRule {
  readonly close: string;
  /** A string literal, or a quoted identifier (whose name a function call can use). */
  readonly kind: 'string' | 'quoted';
  /** A backslash escapes the next character. */
  readonly backslash: boolean;
  /** A doubled `]` closer is an escaped one (MariaDB's `[name]` under sql_mode MSSQL); other closers are always doubled. */
  readonly doubled?: boolean;
}

/**
 * One engine's lexical rules, as data; the lexer has no engine names in it. Each field follows
 * the engine's own scanner (PostgreSQL scan.l, MariaDB sql_lex.cc, SQLite tokenize.c).
 */
export interface LexicalSyntax {
  readonly quotes: Readonly<Record<string, QuoteRule>>;
  /** The whitespace characters (PostgreSQL 15: no \v; none of them beyond ASCII anywhere). */
  readonly spaces: string;
  /** What ends a line comment: LF only (MySQL, SQLite), CR or LF (PostgreSQL), or not known (a lone CR is refused). */
  readonly lineCommentEnd: 'lf' | 'cr-or-lf' | 'unknown';
  /** `--` starts a comment only before a space or control character, or at the end (MySQL). */
  readonly dashCommentNeedsSpace: boolean;
  /** `#` starts a line comment (MySQL). */
  readonly hashComments: boolean;
  /** Block comments nest (PostgreSQL). */
  readonly nestedComments: boolean;
  /**
   * MySQL `/*! ... *\/` bodies are code. A versioned one (`/*!NNNNN`, MariaDB `/*M!`) is code or
   * a comment depending on the server's version: this reading takes it as `code` or `comment`.
   */
  readonly executableComments: 'code' | 'comment' | false;
  /** `$$...$$` and `$tag$...$tag$` strings (PostgreSQL). */
  readonly dollarQuotes: boolean;
  /** `E'...'` strings with backslash escapes, `U&'...'` and `U&"..."` with Unicode escapes (PostgreSQL). */
  readonly escapePrefixes: boolean;
  /** Letters whose `X'...'` / `B'...'` literal ends at the first quote (bit strings, blobs). */
  readonly hexPrefixes: string;
  /** `$name(...)`, `@name`, `:name`, `#name` are parameters, Tcl-style (SQLite). */
  readonly tclVariables: boolean;
  /**
   * MariaDB's identifiers (sql_lex.cc): `$` starts one; a digit starts one unless the text is a
   * number (MY_LEX_NUMBER_IDENT: `2v`, `1e`, `0x1g` are names, `1e5`, `0x1f`, `0b01` numbers); and
   * after a dot the name is read as an identifier even of digits only (MY_LEX_IDENT_SEP: `db.123`).
   */
  readonly mariadbIdentifiers?: boolean;
  /**
   * MariaDB's token boundaries outside identifiers (sql_lex.cc lex_one_token), under every reading:
   * `@` not followed by `@` or a quote is followed by one name of ASCII letters, digits, `.`, `_` and
   * `$` (MY_LEX_USER_END → MY_LEX_HOSTNAME: `@a.` is the variable `a.`); `\N` is NULL
   * (MY_LEX_ESCAPE); `..` is one token (MY_LEX_REAL_OR_POINT, DOT_DOT_SYM) and a number ends before
   * it (MY_LEX_INT_OR_REAL).
   */
  readonly mariadbTokens?: boolean;
}

/** Everything the policy knows about one engine. */
export interface DialectPolicy {
  readonly syntax: LexicalSyntax;
  /**
   * Other readings a server setting can select (MySQL NO_BACKSLASH_ESCAPES, PostgreSQL
   * standard_conforming_strings off, MySQL ANSI_QUOTES). A statement containing a backslash must
   * pass under each reading that lexes at all.
   */
  readonly alternatives: readonly LexicalSyntax[];
  /** First words of the statements a read-only connection runs. */
  readonly reads: readonly string[];
  /** `EXPLAIN t` and `DESCRIBE t` describe a table (MySQL). */
  readonly explainNamesTable: boolean;
  /** Rules on the engine's own functions, views and tables (PostgreSQL: classified from pg_proc; MySQL: the tables holding credentials). */
  readonly catalogRules?: (tokens: readonly Token[], allowWrite: boolean, database?: string) => Objection | undefined;
  /**
   * Rules that apply only where rows are separated (PolicyOptions.rowSeparation): reads of the
   * engine's counters of executor work, which count the rows the separation hides
   * (executor-statistics.ts). `database` is the one the connection opens.
   */
  readonly separatedRowsRules?: (tokens: readonly Token[], database?: string) => Objection | undefined;
  /**
   * Rules that apply where rows are separated and the connection is writable: statements whose
   * effect outlasts the call and changes as whom, or with what settings, later calls run (a role's
   * defaults, memberships, an object's owner; role-state.ts).
   */
  readonly roleStateRules?: (tokens: readonly Token[]) => Objection | undefined;
  /** The engine's own parser as a second, independent check (PostgreSQL: libpg-query). */
  readonly parserCheck?: ParserCheck;
  /**
   * A rule on the raw text, before and apart from any lexing: a layer that rests on no reading of
   * token boundaries (MySQL: the words that reach files on the host, host-file-words.ts).
   */
  readonly rawTextRule?: (sql: string) => Objection | undefined;
  /** `:=` assigns a variable (everywhere but PostgreSQL, where it only names a function argument). */
  readonly colonEqualsAssigns: boolean;
  /** A `DO BEGIN ...; END` or CREATE PROCEDURE/FUNCTION/TRIGGER body is one statement (SAP HANA SQLScript). */
  readonly sqlscriptBlocks?: boolean;
  /**
   * Code a statement adds or runs (routines, triggers, anonymous blocks) can reach the session's
   * context values, so it is refused where they are not signed (context-code.ts). False only where
   * the values are out of SQL's reach (SQLite: a function only the broker sets).
   */
  readonly codeReachesContext: boolean;
  /** `DO expr` only evaluates expressions (MySQL); elsewhere `DO` runs an anonymous block of code. */
  readonly doEvaluatesExpressions?: boolean;
  /** The engine's own rules on a function an object's DDL names to call later (PostgreSQL: `sfunc = f`). */
  readonly referencedFunctionRule?: ReferencedFunctionRule;
}

/** The plainest lexical rules; each engine's dialect (daemon/engines/<engine>/) spreads and overrides them. */
export const PLAIN_SYNTAX = {
  spaces: ' \t\n\r\f\v',
  lineCommentEnd: 'lf' as LexicalSyntax['lineCommentEnd'],
  hexPrefixes: 'X',
  tclVariables: false,
  dashCommentNeedsSpace: false,
  hashComments: false,
  nestedComments: false,
  executableComments: false as LexicalSyntax['executableComments'],
  dollarQuotes: false,
  escapePrefixes: false,
};
/** A string literal quote. */
export const str = (backslash = false): QuoteRule => ({ close: "'", kind: 'string', backslash });
/** A quoted-identifier quote closed by `close`. */
export const ident = (close: string, backslash = false): QuoteRule => ({ close, kind: 'quoted', backslash });
