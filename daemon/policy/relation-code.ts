import { objection } from './objections.js';
import { PG_RUNS_RELATION_CODE } from './pg-functions.generated.js';
import { callArguments, matchParens } from './pg-functions.js';
import { callName, isPunct, isWord } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * PostgreSQL's built-ins that take a relation and run the code the server keeps beside it
 * (PG_RUNS_RELATION_CODE, classified from pg_proc and the server's source): satisfies_hash_partition
 * calls the partition key's hash functions, amcheck's bt_index_check the index's comparison
 * function and expressions, gin_clean_pending_list and brin_summarize_* the index's class, ...
 * A relation named by a constant is judged as a read of it: the name joins the relations the
 * resolve walk follows (its partition key's and indexes' operator classes, expressions and
 * predicates), so an index of built-in classes still answers and a person's comparator that
 * resets statistics is refused. A relation given as a number (an OID, which names no relation the
 * walk can look up by name) or chosen when the statement runs (a column, a parameter, an
 * expression) is refused on every connection: whose code runs is not known before it runs.
 */

const RUNS_RELATION_CODE: ReadonlyMap<string, readonly number[]> = new Map(Object.entries(PG_RUNS_RELATION_CODE));

/** The names of every such function. */
export const RELATION_CODE_FUNCTIONS: readonly string[] = [...RUNS_RELATION_CODE.keys()];

/** Positions of the arguments `name` (lower case, unqualified) takes a relation by, or undefined. */
export const relationCodePositions = (name: string): readonly number[] | undefined => RUNS_RELATION_CODE.get(name);

/** A relation argument as the checks read it: a name given as a constant, a number, or anything else. */
export type RelationArgument = { readonly name: string } | 'number' | undefined;

const HINT = "Name the relation as one string literal ('schema.table' or 'schema.index', optionally ::regclass).";

/** The refusal for `name`() given the relation `argument`, or undefined when it names one by a constant name. */
export function relationCodeObjection(name: string, argument: RelationArgument): Objection | undefined {
  if (argument === 'number' || (argument !== undefined && (/^\s*[0-9+-]/.test(argument.name) || argument.name.trim() === ''))) {
    return objection(
      'dynamic-sql',
      `Refused: ${name}() runs code the server keeps beside the relation it is given (its operator classes' functions, index expressions, partition key), and here the relation is given as a number (an OID), which names no relation this check can judge.`,
      HINT,
    );
  }
  if (argument === undefined) {
    return objection(
      'dynamic-sql',
      `Refused: ${name}() runs code the server keeps beside the relation it is given (its operator classes' functions, index expressions, partition key), and here the relation is chosen only when the statement runs (a column, a parameter or an expression rather than a constant name), so what runs cannot be checked before it runs.`,
      HINT,
    );
  }
  return undefined;
}

/** The refusal for `name` called with no argument to read (written after a dot, attribute notation), or undefined when it runs no relation's code. */
export function relationCodeUnnamedObjection(name: string): Objection | undefined {
  return RUNS_RELATION_CODE.has(name) ? relationCodeObjection(name, undefined) : undefined;
}

/**
 * The relation argument in `tokens[start, end)` as the token rules read it: one string literal,
 * optionally cast to regclass (`'t'::regclass`, `'t'::pg_catalog.regclass`); a number, signed or
 * not; else undefined.
 */
export function relationArgumentTokens(tokens: readonly Token[], start: number, end: number): RelationArgument {
  const first = tokens[start];
  if (first?.kind === 'number' || ((isPunct(first, '-') || isPunct(first, '+')) && tokens[start + 1]?.kind === 'number')) return 'number';
  if (first?.kind !== 'string' || first.opaque) return undefined;
  const rest = tokens.slice(start + 1, end);
  const cast = rest.length === 0 || (rest.length >= 3 && isPunct(rest[0], ':') && isPunct(rest[1], ':') && isRegclass(rest.slice(2)));
  return cast ? { name: first.text } : undefined;
}

/** `regclass` or `pg_catalog.regclass`, unquoted. */
const isRegclass = (type: readonly Token[]): boolean =>
  (type.length === 1 && isWord(type[0], 'REGCLASS')) ||
  (type.length === 3 && isWord(type[0], 'PG_CATALOG') && isPunct(type[1], '.') && isWord(type[2], 'REGCLASS'));

/** The token rules' side: each call of such a function, its relation arguments read by relationArgumentTokens. */
export function postgresRelationCodeRule(tokens: readonly Token[]): Objection | undefined {
  let close: Int32Array | undefined;
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    const positions = name === undefined ? undefined : RUNS_RELATION_CODE.get(name);
    if (name === undefined || positions === undefined) continue;
    close ??= matchParens(tokens);
    const args = callArguments(tokens, k + 1, close);
    for (const position of positions) {
      const range = args[position];
      if (!range) continue;
      const refused = relationCodeObjection(name, relationArgumentTokens(tokens, range[0], range[1]));
      if (refused) return refused;
    }
  }
  return undefined;
}
