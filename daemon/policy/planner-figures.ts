import { objection } from './objections.js';
import { isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/** Words that start a statement EXPLAIN, DESCRIBE or ANALYZE can plan or run (not a table name). */
const STATEMENTS = new Set('SELECT WITH VALUES TABLE INSERT UPDATE DELETE MERGE REPLACE UPSERT CREATE DECLARE EXECUTE FOR'.split(' '));

export const PLANNER_FIGURES_HINT =
  'Use the explain_query tool: on this connection it shows the plan without row or cost figures. A person can see full plans in a database client.';

/** The refusal for a plan the agent asked for on a connection that separates rows. */
export function plannerFiguresObjection(what: string): Objection {
  return objection(
    'planner-figures',
    `Refused: ${what} returns the planner's figures (row estimates, actual row counts, costs), and on this connection they count the rows that context values hide from you, so they can reveal another caller's values.`,
    PLANNER_FIGURES_HINT,
  );
}

/**
 * On a connection that separates rows by context values: a statement whose answer is a plan with
 * figures. The class: EXPLAIN in every form and option list (PostgreSQL `EXPLAIN (ANALYZE, FORMAT
 * JSON)`, MySQL `EXPLAIN ANALYZE`, `EXPLAIN FORMAT=TREE`, `DESCRIBE SELECT`), MariaDB `ANALYZE
 * SELECT` (runs it and prints r_rows), and SQLite `EXPLAIN [QUERY PLAN]`. `DESCRIBE t` / `EXPLAIN t`
 * (MySQL's column list of a table) is no plan and stays allowed. SQL text run by a function
 * (`query_to_xml('EXPLAIN ...')`) is judged by the same rules at its own level.
 */
export function plannerFiguresRule(tokens: readonly Token[]): Objection | undefined {
  const at = leadIndex(tokens);
  const verb = tokens[at];
  if (!isWord(verb, 'EXPLAIN', 'DESCRIBE', 'DESC', 'ANALYZE', 'ANALYSE')) return undefined;
  // Whatever options come between (a parenthesised list, FORMAT=..., words a later release adds),
  // a statement word after the verb means a plan; MariaDB's ANALYZE TABLE t is statistics upkeep.
  const from = isWord(verb, 'ANALYZE', 'ANALYSE') && isWord(tokens[at + 1], 'TABLE') ? at + 2 : at + 1;
  for (let k = from; k < tokens.length; k++) {
    const token = tokens[k];
    if (isWord(token) && STATEMENTS.has(token.text)) return plannerFiguresObjection(`${verb?.text ?? 'EXPLAIN'} of a statement`);
  }
  return undefined;
}

/** pg_class's columns that hold the planner's figures of a relation, counted over every row: ANALYZE's and VACUUM's counts. */
export const PG_CLASS_FIGURES: readonly string[] = ['reltuples', 'relpages', 'relallvisible'];

export const CATALOG_FIGURES_HINT =
  'Name the columns of pg_class you need other than reltuples, relpages and relallvisible; count the rows you can see with SELECT count(*).';

/** The refusal for reading pg_class's figures through `what` on a connection that separates rows. */
export function catalogFiguresObjection(what: string): Objection {
  return objection(
    'planner-figures',
    `Refused: ${what} reads pg_class's row figures (reltuples, relpages, relallvisible), and on this connection they count the rows that context values hide from you: the figure of one partition, or of an index over some rows, is one caller's row count.`,
    CATALOG_FIGURES_HINT,
  );
}

/** What the PostgreSQL parser found of one statement that bears on pg_class's figures. */
export interface ColumnReads {
  readonly columns: readonly string[];
  readonly bare: readonly string[];
  readonly attributes?: readonly string[];
  readonly stars: readonly string[];
  readonly ranges: readonly { readonly relation: string; readonly alias?: string; readonly renamesColumns: boolean }[];
}

/**
 * Where rows are separated on PostgreSQL: a statement that reads pg_class's figures (PG_CLASS_FIGURES),
 * as PostgreSQL's parser reads it: a figure named as a column or a field (`c.reltuples`,
 * `(c).reltuples`, anywhere: only refuses more), or pg_class read whole where it is in FROM (a star,
 * `c` as a row value, `row_to_json(c)`), or with its columns renamed (`pg_class AS c(a, b, ...)`).
 * Reading pg_class's names, kinds and owners still answers.
 */
export function catalogFiguresRule(found: ColumnReads): Objection | undefined {
  const named = [...found.columns, ...(found.attributes ?? [])].find((c) => PG_CLASS_FIGURES.includes(c));
  if (named) return catalogFiguresObjection(named);
  const classes = found.ranges.filter((r) => r.relation === 'pg_class');
  if (classes.length === 0) return undefined;
  if (classes.some((r) => r.renamesColumns)) return catalogFiguresObjection('pg_class with its columns renamed');
  const names = new Set(classes.map((r) => r.alias ?? r.relation));
  if (found.stars.some((q) => q === '' || names.has(q))) return catalogFiguresObjection('a * over pg_class');
  const whole = found.bare.find((c) => names.has(c));
  if (whole) return catalogFiguresObjection(`pg_class's whole row (${whole})`);
  return undefined;
}
