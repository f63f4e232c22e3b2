import { HanactlError } from '../../../shared/errors.js';
import { invoker } from './postgres-owner-rights.js';
import { DOLLAR_QUOTE, FIRST_NORMAL_OID, TOKEN, UNREADABLE_TOKEN } from './postgres-reach.js';

/**
 * Where rows are separated: views and functions that remove rows without a boundary PostgreSQL
 * keeps against the caller's own conditions. The planner flattens a view that is not
 * `security_barrier` into the statement (and inlines a LANGUAGE sql set-returning function that is
 * neither STRICT, VOLATILE, SECURITY DEFINER nor given SET clauses: clauses.c,
 * inline_set_returning_function), and then orders the caller's conditions and the view's own
 * filter by cost: `WHERE note::int > 0` runs on the rows the view's filter would remove, and its
 * error text carries them. That holds whatever the filter reads (a context value, a join to a
 * table under row security, a sublink, a function of a person's: PostgreSQL's "Rules and
 * Privileges"), so a view is judged by the shape of its stored query, not by what it calls. A
 * `security_barrier` view keeps its own filter first (only LEAKPROOF functions of the caller run
 * earlier), also over a view without one, which it holds inside; row-level security policies are
 * such barriers already.
 *
 * A security_invoker view reads everything with the caller's rights, so the rows it removes are
 * rows the caller may select itself; what it reads with other rights (a view without
 * security_invoker) is judged on its own.
 *
 * A view removes rows (filtersRows) unless its stored query is one SELECT over one relation with
 * no WHERE, no join, no sublink, no HAVING, no set operation, no LIMIT or OFFSET, no DISTINCT ON
 * and no TABLESAMPLE: it then only projects or renames columns. The walk (postgres-reach.ts) finds
 * such a view wherever the statement reaches it, and the resolve step refuses it (rule
 * `context-barrier`) unless it is `security_barrier` or `security_invoker`, or is reached only through
 * `security_barrier` views over it (not named by the statement, not read by another reached view
 * without one, nor under an inlinable SQL function); and an inlinable SQL function made since
 * initdb that removes rows, wherever reached (a BEGIN ATOMIC body by its stored query, a text body
 * by its tokens: textBodyFilters).
 */

const G = 'pg_catalog';

/** A SQL string literal of `text` (standard_conforming_strings, as the walk is sent). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** True when the view `v` (pg_class) is security_barrier, as the server's boolean parser reads the option. */
export const barrier = (v: string): string =>
  `EXISTS (SELECT FROM ${G}.unnest(${v}.reloptions) AS o(opt) WHERE o.opt OPERATOR(${G}.~*) '^security_barrier=(t|tr|tru|true|y|ye|yes|on|1)$')`;

/**
 * The jointree of a query that reads at most one relation and keeps all its rows, as the server
 * writes a stored Query (outfuncs.c): one range-table reference, or none (`SELECT f(x) AS d`), and
 * no condition.
 */
const ONE_RELATION = literal(String.raw`\{FROMEXPR :fromlist (\(\{RANGETBLREF :rtindex [0-9]+\}\)|<>) :quals <>\}`);

/** The nodes a second query or a join would add to a stored tree; and a query's own. */
const NODES = literal(String.raw`\{(QUERY|FROMEXPR|JOINEXPR) `);
const A_QUERY = literal(String.raw`\{QUERY `);

/** A Query field that removes rows when it is set: HAVING, a set operation, OFFSET, LIMIT or FETCH, TABLESAMPLE. */
const ROW_REMOVING_FIELD = literal(`:(havingQual|setOperations|limitOffset|limitCount|tablesample) [^<]`);

/**
 * True when the stored query tree `tree` (text: a view's rule action, a BEGIN ATOMIC body) may
 * remove rows of what it reads: unless it holds exactly one Query (a sublink, a CTE, a subquery in
 * FROM or a set operation's branch is another) whose jointree is ONE_RELATION, no join, none of
 * ROW_REMOVING_FIELD and no DISTINCT ON. A name in the tree cannot pose as a node or a field:
 * the server writes the space, brace and parenthesis of a name with a backslash before them. A
 * server that wrote a tree in another form (a field left out) would make the answer true, never false.
 */
export function filtersRows(tree: string): string {
  return `NOT ((SELECT ${G}.count(*) FROM ${G}.regexp_matches(${tree}, ${NODES}, 'g')) OPERATOR(${G}.=) 2
          AND ${tree} OPERATOR(${G}.~) ${A_QUERY} AND ${tree} OPERATOR(${G}.~) ${ONE_RELATION}
          AND ${tree} OPERATOR(${G}.!~) ${ROW_REMOVING_FIELD} AND ${tree} OPERATOR(${G}.!~) ':hasDistinctOn true')`;
}

/** True when the view `v` (pg_class) removes rows in its rules (filtersRows). */
export function viewFilters(v: string): string {
  return `EXISTS (SELECT FROM ${G}.pg_rewrite w WHERE w.ev_class OPERATOR(${G}.=) ${v}.oid AND ${filtersRows(`w.ev_action::${G}.text`)})`;
}

/**
 * The view stage's question (postgres-settled.ts): true for a view `a` (pg_class) that is not
 * security_barrier nor security_invoker and removes rows (filtersRows).
 */
export function contextBarrierCandidate(a: string): string {
  return `(${a}.relkind OPERATOR(${G}.=) 'v' AND NOT ${barrier(a)} AND NOT ${invoker(a)} AND ${viewFilters(a)})`;
}

/** The keywords with which a query's text removes rows of what it reads. */
const FILTER_WORDS = `'{where,join,having,limit,offset,fetch,union,intersect,except,distinct,tablesample}'::${G}.text[]`;

/**
 * True when the SQL text body of the function `p` (pg_proc) may remove rows: one of its tokens
 * (TOKEN, PostgreSQL's scanner's reading: comments, strings and quoted names are tokens of their
 * own) is one of FILTER_WORDS, or a comma follows FROM (a second relation, whose rows a join may
 * remove); or the body is one TOKEN cannot read (UNREADABLE_TOKEN, DOLLAR_QUOTE).
 */
function textBodyFilters(p: string): string {
  return `(${p}.prosrc OPERATOR(${G}.~) ${DOLLAR_QUOTE}
      OR EXISTS (SELECT FROM ${G}.regexp_matches(${p}.prosrc, ${TOKEN}, 'g') AS t(m) WHERE ${UNREADABLE_TOKEN})
      OR EXISTS (SELECT FROM (SELECT ${G}.lower(t.m[1]) AS word,
                                     ${G}.bool_or(${G}.lower(t.m[1]) OPERATOR(${G}.=) 'from') OVER (ORDER BY t.n) AS after_from
                                FROM ${G}.regexp_matches(${p}.prosrc, ${TOKEN}, 'g') WITH ORDINALITY AS t(m, n)) AS k
                  WHERE ${G}.array_position(${FILTER_WORDS}, k.word) IS NOT NULL
                     OR (k.word OPERATOR(${G}.=) ',' AND k.after_from)))`;
}

/** True when the SQL function `p` (pg_proc) may remove rows: its BEGIN ATOMIC body's stored query, else its text body. */
function functionFilters(p: string): string {
  return `(CASE WHEN ${p}.prosqlbody IS NOT NULL THEN ${filtersRows(`${p}.prosqlbody::${G}.text`)} ELSE ${textBodyFilters(p)} END)`;
}

/** True for a function `p` (pg_proc) the planner may inline into the statement's FROM (inline_set_returning_function). */
const inlinable = (p: string): string =>
  `(${p}.prolang OPERATOR(${G}.=) ANY (SELECT l.oid FROM ${G}.pg_language l WHERE l.lanname OPERATOR(${G}.=) 'sql')
     AND ${p}.prokind OPERATOR(${G}.=) 'f' AND ${p}.proretset AND NOT ${p}.proisstrict AND ${p}.provolatile OPERATOR(${G}.<>) 'v'
     AND NOT ${p}.prosecdef AND ${p}.proconfig IS NULL)`;

/**
 * True when the view `v`, reached by the walk's row `r`, is held inside a barrier: the statement
 * does not name it, something reached from the same root reads it (a reached relation's rules, or
 * a live row-level-security policy of one, which the server applies as a barrier), every reached
 * relation whose rules read it is a security_barrier view, and nothing the same root reaches is
 * an inlinable SQL function.
 */
function shielded(r: string, v: string): string {
  const readers = `${G}.pg_rewrite w JOIN ${G}.pg_depend d
           ON d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
          AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass AND d.refobjid OPERATOR(${G}.=) ${v}.oid
         JOIN reach q ON q.oid OPERATOR(${G}.=) w.ev_class AND q.root OPERATOR(${G}.=) ${r}.root AND q.kind OPERATOR(${G}.=) 'r'
         JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) w.ev_class
        WHERE w.ev_class OPERATOR(${G}.<>) ${v}.oid`;
  const policies = `${G}.pg_policy y JOIN ${G}.pg_depend d
           ON d.classid OPERATOR(${G}.=) '${G}.pg_policy'::${G}.regclass AND d.objid OPERATOR(${G}.=) y.oid
          AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass AND d.refobjid OPERATOR(${G}.=) ${v}.oid
         JOIN reach q ON q.oid OPERATOR(${G}.=) y.polrelid AND q.root OPERATOR(${G}.=) ${r}.root AND q.kind OPERATOR(${G}.=) 'r'
         JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) y.polrelid AND c.relrowsecurity`;
  return `(${r}.root OPERATOR(${G}.<>) ${G}.textin(${G}.regclassout(${v}.oid::${G}.regclass))
      AND (EXISTS (SELECT FROM ${readers}) OR EXISTS (SELECT FROM ${policies}))
      AND NOT EXISTS (SELECT FROM ${readers} AND NOT (c.relkind OPERATOR(${G}.=) 'v' AND ${barrier('c')}))
      AND NOT EXISTS (SELECT FROM reach q JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) q.oid
                       WHERE q.root OPERATOR(${G}.=) ${r}.root AND q.kind OPERATOR(${G}.=) 'p' AND ${inlinable('p')}))`;
}

/**
 * What the walk found that removes rows without a barrier, as `V <root> reads <view>` or `V <root>
 * calls <function>()`, or NULL: a view made since initdb, not security_barrier nor shielded, that
 * removes rows (filtersRows), named as regclass text (schema-qualified off the search path); an
 * inlinable SQL function made since initdb that removes rows (functionFilters).
 */
export function contextBarrierFinding(): string {
  return `COALESCE(
  (SELECT ${G}.concat('V ', r.root, ' reads ', ${G}.textin(${G}.regclassout(v.oid::${G}.regclass)))
     FROM reach r JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND v.relkind OPERATOR(${G}.=) 'v' AND v.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
      AND NOT ${barrier('v')} AND NOT ${invoker('v')} AND NOT ${shielded('r', 'v')} AND ${viewFilters('v')}
    LIMIT 1),
  (SELECT ${G}.concat('V ', r.root, ' calls ', ${G}.textin(${G}.regprocout(p.oid::${G}.regproc)), '()')
     FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${inlinable('p')}
      AND ${functionFilters('p')}
    LIMIT 1))`;
}

/** The refusal for a finding `V <root> reads <view>` or `V <root> calls <function>()` (what follows the kind), or undefined. */
export function contextBarrierRefusal(what: string): HanactlError | undefined {
  const found = /^(.*?) (reads|calls) (.+)$/s.exec(what);
  if (!found) return undefined;
  const [, root, verb, target] = found as unknown as [string, string, string, string];
  const details = { rule: 'context-barrier' };
  const named = root === target || target.endsWith(`.${root}`) || root.endsWith(`.${target}`) || root.endsWith(`."${target}"`);
  const through = named ? '' : `${root} ${verb} ${target}: `;
  if (verb === 'calls') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${target} is a LANGUAGE sql set-returning function that filters rows, and PostgreSQL inlines it into the statement, where a condition of the statement can run on the rows its filter removes and show their values in an error. A person can replace it with a view WITH (security_barrier = true), or keep the server from inlining it (ALTER FUNCTION ${target.replace(/\(\)$/, '')} VOLATILE, or write it in PL/pgSQL).`,
      { ...details, hint: 'Read through a security_barrier view instead, or ask a person to change the function.' },
    );
  }
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through}${target} is a view that filters rows (by a condition, a join, a sublink, HAVING, a set operation or LIMIT) and is not security_barrier, so PostgreSQL merges it into the statement, where a condition of the statement can run on the rows its filter removes and show their values in an error. A person can make the view keep its filter first: ALTER VIEW ${target} SET (security_barrier = true).`,
    { ...details, hint: 'Read through a security_barrier view instead, or ask a person to set security_barrier on the view.' },
  );
}
