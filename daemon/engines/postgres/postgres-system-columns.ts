import { HanactlError } from '../../../shared/errors.js';
import { PG_COORDINATE_ATTNUMS, PG_COORDINATE_COLUMNS, systemColumnObjection } from '../../policy/system-columns.js';
import { BODY_WORDS, FIRST_NORMAL_OID, STORED_TREES, TEXT_LANGUAGE } from './postgres-reach.js';

/**
 * Where rows are separated: a person's view or function that reads a system column which is a
 * row's physical or transaction coordinate (ctid, xmin, xmax, cmin, cmax), or samples a table
 * (TABLESAMPLE), found by the walk (postgres-reach.ts) wherever the statement reaches it
 * (policy/system-columns.ts says why). In the stored trees of objects created since initdb (a
 * view's rules, a BEGIN ATOMIC body, a policy, a default argument, ...), a Var of a negative
 * attribute number (sysattr.h: ctid -1 ... cmax -5; tableoid -6 is kept) or a RangeTblEntry with a
 * TABLESAMPLE clause; in a SQL or PL/pgSQL text body, the word (coarse: the text is not parsed).
 */

const G = 'pg_catalog';

/** The names by attribute number (minus it, as the matched digits), by subscript: a CASE would look up = by name. */
const NAME_OF_ATTNUM = `(ARRAY[${PG_COORDINATE_ATTNUMS.map((n) => `'${['', 'ctid', 'xmin', 'cmin', 'xmax', 'cmax'][-n]}'`).join(', ')}]::${G}.text[])[${G}.int4in(${G}.textout(m[1]))]`;

const WORDS = [...PG_COORDINATE_COLUMNS, 'tablesample'].map((w) => `'${w}'`).join(', ');

/** What the walk found, as `Y <root> reads <column>` (or `reads tablesample`), or NULL. */
export function systemColumnFinding(): string {
  return `COALESCE(
  (SELECT ${G}.concat('Y ', r.root, ' reads ', ${NAME_OF_ATTNUM})
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
     CROSS JOIN LATERAL ${G}.regexp_matches(t.tree, ':varattno -([1-5]) ', 'g') AS m
    WHERE r.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
    LIMIT 1),
  (SELECT ${G}.concat('Y ', r.root, ' reads tablesample')
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
    WHERE r.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${G}.strpos(t.tree, ':tablesample {TABLESAMPLECLAUSE') OPERATOR(${G}.>) 0
    LIMIT 1),
  (SELECT ${G}.concat('Y ', r.root, ' reads ', x.w)
     FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL ${G}.unnest(${BODY_WORDS}) AS x(w)
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND x.w OPERATOR(${G}.=) ANY (ARRAY[${WORDS}]::${G}.text[])
    LIMIT 1))`;
}

/** The refusal for a finding `Y <root> reads <column>` (what follows the kind), or undefined when it is not one. */
export function systemColumnRefusal(what: string): HanactlError | undefined {
  const found = /^(.*) reads (ctid|xmin|xmax|cmin|cmax|tablesample)$/s.exec(what);
  if (!found) return undefined;
  const [, root, column] = found as unknown as [string, string, string];
  const inner = systemColumnObjection(column === 'tablesample' ? 'TABLESAMPLE' : column);
  const why = inner.sentence.replace(/^Refused: /, '');
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${root} reads ${column === 'tablesample' ? 'TABLESAMPLE' : column} (through the objects it uses): ${why} ${inner.hint}`,
    { rule: inner.rule, hint: inner.hint },
  );
}
