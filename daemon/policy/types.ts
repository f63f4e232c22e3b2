import type { Engine } from '../../shared/connection-url.js';
import type { ConditionSite } from './pg-row-conditions.js';

/** How one statement is judged. */
export interface PolicyOptions {
  /** The engine whose lexical rules and statement set apply. */
  readonly dialect: Engine;
  /** A person marked the connection writable with `hanactl`; no tool can set this. */
  readonly allowWrite: boolean;
  /**
   * The database the connection opens, where an unqualified name resolves on MySQL/MariaDB (a
   * connection to the `mysql` database reads `user` as mysql.user). Absent: only qualified names
   * of system tables are recognised.
   */
  readonly database?: string;
  /**
   * The connection declares context values that are not signed: code the checks cannot read
   * (routines, triggers, anonymous blocks) could overwrite them, so the agent may not add or run
   * such code (context-code.ts).
   */
  readonly unsignedContext?: boolean;
  /**
   * The connection declares context names, so rows are separated between callers (row-level
   * security, DEFINER views): the planner's figures count rows that separation hides, so no
   * EXPLAIN of a statement runs through the statement path (planner-figures.ts).
   */
  readonly rowSeparation?: boolean;
  /**
   * The connection declares no context names, but its login also backs one that does (the same
   * engine and user): what it makes or changes in the schema would run in those calls, so
   * it refuses schema changes as they do (shared-schema.ts).
   */
  readonly sharedLogin?: boolean;
}

/**
 * What a statement names, as PostgreSQL's parser read it, for the check the server itself makes
 * in the call's transaction (what each name resolves to: a view over pg_stat_activity, a SECURITY
 * DEFINER function). Absent on engines without the parser check.
 */
export interface StatementReferences {
  /** Relations as regclass text (`"schema"."name"`). */
  readonly relations: readonly string[];
  /**
   * The relations among `relations` the statement writes (INSERT, UPDATE, DELETE, MERGE, COPY
   * ... FROM): what a write to each runs (its rules, triggers, defaults, generated columns,
   * constraints, index expressions, partitions, the tables its cascades write to) is resolved too.
   */
  readonly written?: readonly string[];
  /**
   * The relations among `written` whose rows the statement adds (`inserts`: INSERT, MERGE ... THEN
   * INSERT, COPY ... FROM) or changes (`updates`: UPDATE, ON CONFLICT DO UPDATE, MERGE ... THEN
   * UPDATE): where rows are separated, a view among them that filters rows must check the rows a
   * write leaves (postgres-check-option.ts).
   */
  readonly inserts?: readonly string[];
  readonly updates?: readonly string[];
  /**
   * The relations among `written` whose rows the statement removes (DELETE, MERGE ... THEN
   * DELETE): with `updates`, where rows are separated, a table a foreign key's ON DELETE / ON
   * UPDATE action follows into another table is refused (postgres-fk-actions.ts).
   */
  readonly deletes?: readonly string[];
  /** Functions called, unqualified, as PostgreSQL folds them (pg_proc.proname). */
  readonly functions: readonly string[];
  /** Operators used, by name as written (pg_operator.oprname). */
  readonly operators?: readonly string[];
  /** Types named (casts, declarations), unqualified, as folded (pg_type.typname). */
  readonly types?: readonly string[];
  /** Names written after a dot or as a field (`o.peek`, `(o).peek`): a call of a one-argument function when no column is named so. */
  readonly attributes?: readonly string[];
  /**
   * The connection separates rows: what the names reach must not be the executor's statistics
   * either (a person's view over pg_stat_user_tables; executor-statistics.ts).
   */
  readonly separated?: boolean;
  /**
   * The calls in the statement's conditions on no column of the row (pg-row-conditions.ts), which
   * PostgreSQL may run on rows a row-security policy hides: judged where rows are separated.
   */
  readonly conditions?: readonly ConditionSite[];
  /**
   * The connection is read-only: a built-in the names reach that only a writable connection runs
   * (txid_current, gin_clean_pending_list, nextval) is refused too, as it is when called by name;
   * a read-only transaction does not stop them all.
   */
  readonly readOnly?: boolean;
  /**
   * The statement reads settings wholesale rather than by a constant name (SHOW ALL,
   * pg_show_all_settings(), current_setting() of a name chosen when it runs), as it is named in a
   * refusal: the server refuses it where a setting that can hold a secret is set and the login
   * may read it (postgres-secret-settings.ts).
   */
  readonly settings?: string;
}

/**
 * The validator's answer. `kind` is `read` when the statement passes the read-only rules (even on a
 * writable connection), else `write`. A refusal names a stable kebab-case `rule`; `message` is
 * complete on its own (`sentence`, what is refused and why, then the hint), `hint` says what the
 * agent may do instead.
 */
export type Verdict =
  | { readonly ok: true; readonly kind: 'read' | 'write'; readonly references?: StatementReferences }
  | { readonly ok: false; readonly rule: string; readonly message: string; readonly sentence: string; readonly hint: string };

/** A refusal as the rules produce it. */
export type Objection = Extract<Verdict, { ok: false }>;

/**
 * One token of a statement's skeleton. Comments are gone; literals are single tokens whose `shown`
 * form is a placeholder (`''` for strings, `""` for quoted identifiers).
 */
export interface Token {
  readonly kind: 'word' | 'quoted' | 'string' | 'number' | 'punct';
  /**
   * word: upper-cased; quoted: the identifier between its quotes; string: the literal's value;
   * number: as written; punct: one character.
   */
  readonly text: string;
  /** How the token appears in the skeleton. */
  readonly shown: string;
  /** Whitespace or a comment came before it. */
  readonly spaced: boolean;
  /** The value holds escapes, so `text` may not be what the engine sees (E'\x41', U&"\0041"). */
  readonly opaque: boolean;
}
