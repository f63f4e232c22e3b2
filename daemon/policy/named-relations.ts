import { pgStatisticsRelationObjection, postgresStatisticsRule, postgresTransactionAgeRule } from './executor-statistics.js';
import { PG_NAMES_RELATION } from './pg-functions.generated.js';
import { postgresSystemColumnRule } from './system-columns.js';
import { callArguments, literalArgument, matchParens } from './pg-functions.js';
import { catalogFiguresObjection } from './planner-figures.js';
import { callName } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * Where rows are separated on PostgreSQL, a relation is judged by its name however the statement
 * names it: in FROM (the token rules' words, the parser's range variables) and as the string a
 * function reads a relation by (table_to_xml, table_to_xmlschema, table_to_xml_and_xmlschema:
 * PG_NAMES_RELATION, classified from pg_proc). The rules keyed by a relation's name apply to both:
 * the executor's statistics views (pg_stat_*_tables, pg_statio_*, pg_stat_database, pg_locks,
 * pg_sequences, ...: executor-statistics.ts) and pg_class, which such a function reads whole, its
 * row figures (reltuples, relpages, relallvisible) included (planner-figures.ts). A relation named
 * any other way (an OID, a cast, an expression) is refused on every connection already
 * (namedRelationObjection). The resolve step judges what the name resolves to as well.
 */

const NAMES_RELATION: ReadonlyMap<string, Readonly<Record<number, readonly number[]>>> = new Map(Object.entries(PG_NAMES_RELATION));

/** The last part of a relation name as regclass input folds it: `s."T"` -> T, ` S.t ` -> t. */
function lastPart(text: string): string {
  const part = text.trim().split('.').at(-1)?.trim() ?? '';
  return part.startsWith('"') && part.endsWith('"') && part.length >= 2 ? part.slice(1, -1).replaceAll('""', '"') : part.toLowerCase();
}

/** The refusal where rows are separated for a relation named `value` (as a string) that `call`() reads whole, or undefined. */
export function separatedRelationNameObjection(call: string, value: string): Objection | undefined {
  const relation = lastPart(value);
  const statistics = pgStatisticsRelationObjection(relation);
  if (statistics) return statistics;
  return relation === 'pg_class' ? catalogFiguresObjection(`${call}() of pg_class`) : undefined;
}

/**
 * Where rows are separated: the refusal for the call `name` with `argCount` arguments when an
 * argument it reads a relation by (`text`, the string constant at a position, or undefined) names
 * one the name-keyed rules refuse.
 */
export function separatedNamedRelationObjection(
  name: string,
  argCount: number,
  text: (position: number) => string | undefined,
): Objection | undefined {
  for (const position of NAMES_RELATION.get(name)?.[argCount] ?? []) {
    const value = text(position);
    const refused = value === undefined ? undefined : separatedRelationNameObjection(name, value);
    if (refused) return refused;
  }
  return undefined;
}

/** The token rules' side: each call of such a function whose relation argument is one plain string literal. */
export function postgresNamedRelationRule(tokens: readonly Token[]): Objection | undefined {
  let close: Int32Array | undefined;
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    if (name === undefined || !NAMES_RELATION.has(name)) continue;
    close ??= matchParens(tokens);
    const args = callArguments(tokens, k + 1, close);
    const refused = separatedNamedRelationObjection(name, args.length, (position) => literalArgument(tokens, args[position]));
    if (refused) return refused;
  }
  return undefined;
}

/**
 * PostgreSQL's token rules where rows are separated: the executor's statistics by name, the
 * relations functions read by name, age() of a transaction id, and the system columns that are
 * a row's physical or transaction coordinates (and TABLESAMPLE).
 */
export function postgresSeparatedRowsRule(tokens: readonly Token[]): Objection | undefined {
  return (
    postgresStatisticsRule(tokens) ??
    postgresNamedRelationRule(tokens) ??
    postgresTransactionAgeRule(tokens) ??
    postgresSystemColumnRule(tokens)
  );
}
