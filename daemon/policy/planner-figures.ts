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
