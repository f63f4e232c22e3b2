import { PG_RUNS_RELATION_CODE } from '../../policy/pg-functions.generated.js';
import { TOKEN, treeOrBodyFinding } from './postgres-reach.js';
import { unicodeEscapes } from './postgres-unicode-names.js';

/**
 * The walk's side of the built-ins that run a relation's own code (relation-code.ts:
 * satisfies_hash_partition, bt_index_check, gin_clean_pending_list, brin_summarize_*, ...), called
 * by a person's object rather than the statement. A stored tree (a view's rules, a policy, a BEGIN
 * ATOMIC body, a default argument, what a write fires) holds the relation as a regclass constant
 * when a constant named it: the walk folds it into what it reads (namedByConstant, as for
 * table_to_xml) and judges its operator classes, expressions and partition key. A SQL or PL/pgSQL
 * text body names it as a word, which the walk follows already. Anything else hands the function
 * a relation chosen when it runs (a column, a variable, a number, an expression): refused on every
 * connection, as `H <root> calls <name>()`.
 */

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** The functions whose relation argument is their first, and those that take it elsewhere. */
const FIRST = Object.entries(PG_RUNS_RELATION_CODE)
  .filter(([, positions]) => positions.length === 1 && positions[0] === 0)
  .map(([name]) => name);
const ELSEWHERE = Object.keys(PG_RUNS_RELATION_CODE).filter((name) => !FIRST.includes(name));
const ALL = quoted([...FIRST, ...ELSEWHERE]);

/** A SQL string literal of `text` (standard_conforming_strings, as the walk is sent). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * True when the stored tree `tree` calls such a function with a relation that is no regclass
 * constant: a first argument that is not one (a coercion to oid, RelabelType, may wrap it: the
 * relation of satisfies_hash_partition is an oid), or any call of one whose relation argument is
 * not its first (its arguments before it hold braces the pattern cannot skip). A call's fields up
 * to its arguments hold no braces, so its first argument is the node after `:args (`.
 */
function treeAtRunTime(tree: string): string {
  return `EXISTS (SELECT FROM pg_catalog.regexp_matches(${tree}, ':funcid (\\d+) [^{}]*:args \\((\\{RELABELTYPE :arg )?(\\{CONST :consttype 2205 )?', 'g') AS m
                   JOIN pg_catalog.pg_proc f ON f.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(m[1]))
                  WHERE f.proname OPERATOR(pg_catalog.=) ANY (ARRAY[${ALL}]::pg_catalog.name[])
                    AND (m[3] IS NULL OR f.proname OPERATOR(pg_catalog.<>) ALL (ARRAY[${quoted(FIRST)}]::pg_catalog.name[])))`;
}

/**
 * True when the text body `body` names such a function other than as a call whose first argument
 * is one plain string literal (cast to regclass or not) followed by `,` or `)`: a name followed by
 * anything else, one whose relation argument is not its first, or one written with Unicode escapes.
 */
function textAtRunTime(body: string): string {
  const names = [...FIRST, ...ELSEWHERE].join('|');
  const call = literal(String.raw`\m(${names})\M("?\s*\(\s*'(?:[^']|'')*'(?:\s*::\s*(?:pg_catalog\s*\.\s*)?regclass)?\s*[,)])?`);
  return `(EXISTS (SELECT FROM pg_catalog.regexp_matches(${body}, ${call}, 'gi') AS m
                  WHERE m[2] IS NULL OR pg_catalog.lower(m[1]) OPERATOR(pg_catalog.<>) ALL (ARRAY[${quoted(FIRST)}]::pg_catalog.text[]))
          OR EXISTS (SELECT FROM (${unicodeEscapes(body, TOKEN)}) AS u
                      WHERE NOT u.string AND pg_catalog.lower(u.text) OPERATOR(pg_catalog.=) ANY (ARRAY[${ALL}]::pg_catalog.text[])))`;
}

/** A word of a text body that may name such a function, to skip the regular expressions on every other body. */
const TEXT_MENTIONS = literal(`${[...FIRST, ...ELSEWHERE].join('|')}|u&['"]`);

/**
 * What the walk reached that hands such a function a relation chosen when it runs, as
 * `H <root> calls <name>()` (the object whose tree or body does), or NULL.
 */
export function relationCodeFinding(): string {
  return treeOrBodyFinding({
    letter: 'H',
    // A first argument that is no regclass constant, or any call of one whose relation argument is not its first (treeAtRunTime).
    treeCondition: treeAtRunTime('t.tree'),
    // Only a body that names such a function, or writes a Unicode-escaped name that may be one, is read for how it calls it.
    bodyFilter: `p.prosrc OPERATOR(pg_catalog.~*) ${TEXT_MENTIONS}`,
    // A call whose first argument is not one plain string literal, or a name without a call the text shows (textAtRunTime).
    bodyCondition: textAtRunTime('p.prosrc'),
  });
}
