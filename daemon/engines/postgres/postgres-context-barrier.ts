import { HanactlError } from '../../../shared/errors.js';
import { FIRST_NORMAL_OID } from './postgres-reach.js';

/**
 * Where rows are separated: views and functions that filter rows by the call's context values
 * without a boundary PostgreSQL keeps against the caller's own conditions. The planner flattens a
 * view that is not `security_barrier` into the statement (and inlines a LANGUAGE sql set-returning
 * function that is neither STRICT, VOLATILE, SECURITY DEFINER nor given SET clauses: clauses.c,
 * inline_set_returning_function), and then orders the caller's conditions and the view's own
 * filter by cost: `WHERE note::bool` runs on the rows `customer_id = current_setting(...)::int`
 * would remove, and its error text carries another caller's value. A `security_barrier` view keeps
 * its own filter first (only LEAKPROOF functions of the caller run earlier), also over a view
 * without one, which it holds inside; row-level security policies are such barriers already.
 *
 * A view or function reads a context value when its definition calls current_setting or set_config
 * with a name that is not one literal outside `mcp.` (`current_setting('TimeZone')` is not one),
 * reads pg_settings or pg_show_all_settings, calls hanactl's verifying function (the only SECURITY
 * DEFINER function the walk lets through), or calls a function made since initdb that does, at any
 * depth (a BEGIN ATOMIC body by pg_depend, a SQL or PL/pgSQL text body by its words, as the walk
 * follows them). The walk (postgres-reach.ts) finds such a view wherever the statement reaches it,
 * and the resolve step refuses it (rule `context-barrier`) unless it is `security_barrier`, or is
 * reached only through `security_barrier` views over it (not named by the statement, not read by
 * another reached view without one, nor under an inlinable SQL function); and an inlinable SQL
 * function that reads one, wherever reached.
 */

const G = 'pg_catalog';

/** True when the view `v` (pg_class) is security_barrier, as the server's boolean parser reads the option. */
export const barrier = (v: string): string =>
  `EXISTS (SELECT FROM ${G}.unnest(${v}.reloptions) AS o(opt) WHERE o.opt OPERATOR(${G}.~*) '^security_barrier=(t|tr|tru|true|y|ye|yes|on|1)$')`;

/** The built-ins that read a setting's value. */
const SETTING_READERS = `'{current_setting,set_config,pg_show_all_settings}'::${G}.name[]`;

/** A call of current_setting or set_config, as a deparsed view or a text body writes it. */
const CALL = String.raw`\m(current_setting|set_config)\s*\(`;

/** Such a call whose setting is one plain literal that does not start with `mcp.` (`'TimeZone'::text`). */
const OTHER_SETTING = String.raw`\m(current_setting|set_config)\s*\(\s*'(?!mcp\.)[^']*'(::text)?\s*[,)]`;

/** A SQL string literal of `text` (standard_conforming_strings, as the walk is sent). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** True when the text `t` (a deparsed view, a function's text body) may read a context value. */
function settingsText(t: string): string {
  return `((SELECT ${G}.count(*) FROM ${G}.regexp_matches(${t}, ${literal(CALL)}, 'gi'))
            OPERATOR(${G}.<>) (SELECT ${G}.count(*) FROM ${G}.regexp_matches(${t}, ${literal(OTHER_SETTING)}, 'gi'))
          OR ${t} OPERATOR(${G}.~*) '\\mpg_(settings|show_all_settings)\\M')`;
}

/** True when the stored tree `tree` (text) calls a setting reader by OID or reads pg_settings. */
function treeReadsSettings(tree: string): string {
  return `(EXISTS (SELECT FROM ${G}.regexp_matches(${tree}, ':(?:funcid|opfuncid) (\\d+)', 'g') AS m
                   JOIN ${G}.pg_proc s ON s.oid OPERATOR(${G}.=) m[1]::${G}.oid
                  WHERE s.proname OPERATOR(${G}.=) ANY (${SETTING_READERS}))
          OR ${tree} OPERATOR(${G}.~) ${G}.concat(':relid ', '${G}.pg_settings'::${G}.regclass::${G}.oid, ' '))`;
}

/** True when the view `v` (pg_class) may read a context value in its own rules (not through a function of a person's). */
function viewReadsSettings(v: string): string {
  return `(EXISTS (SELECT FROM ${G}.pg_rewrite w WHERE w.ev_class OPERATOR(${G}.=) ${v}.oid AND ${treeReadsSettings('w.ev_action::pg_catalog.text')})
           AND ${settingsText(`${G}.pg_get_viewdef(${v}.oid)`)})`;
}

/**
 * The view stage's question (postgres-settled.ts): true for a view `a` (pg_class) that is not
 * security_barrier and whose rules call a setting reader by OID or read pg_settings. A view that
 * calls a function made since initdb goes to the walk anyway.
 */
export function contextBarrierCandidate(a: string): string {
  return `(${a}.relkind OPERATOR(${G}.=) 'v' AND NOT ${barrier(a)}
     AND EXISTS (SELECT FROM ${G}.pg_rewrite w WHERE w.ev_class OPERATOR(${G}.=) ${a}.oid AND ${treeReadsSettings('w.ev_action::pg_catalog.text')}))`;
}

/** A SQL or PL/pgSQL function `p` (pg_proc). */
const TEXT_LANGUAGE = (p: string): string => `${p}.prolang IN (SELECT l.oid FROM ${G}.pg_language l WHERE l.lanname IN ('sql', 'plpgsql'))`;

/** True when the function `p` (pg_proc) reads a context value in its own body: hanactl's verifying function (SECURITY DEFINER), a text body, a BEGIN ATOMIC body. */
function functionReadsSettings(p: string): string {
  return `(${p}.prosecdef
          OR (${TEXT_LANGUAGE(p)} AND ${p}.prosqlbody IS NULL AND ${settingsText(`${p}.prosrc`)})
          OR (${p}.prosqlbody IS NOT NULL AND ${treeReadsSettings(`${p}.prosqlbody::${G}.text`)}))`;
}

/**
 * True when some function made since initdb among `start` (a SELECT of OIDs), or one they call at
 * any depth (pg_depend of a BEGIN ATOMIC body, the words of a SQL or PL/pgSQL text body), reads a
 * context value (functionReadsSettings).
 */
function callsReadSettings(start: string): string {
  return `EXISTS (WITH RECURSIVE f(oid) AS (
       ${start}
       UNION SELECT e.oid FROM f JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) f.oid CROSS JOIN LATERAL (
         SELECT d.refobjid AS oid FROM ${G}.pg_depend d
          WHERE d.classid OPERATOR(${G}.=) '${G}.pg_proc'::${G}.regclass AND d.objid OPERATOR(${G}.=) p.oid
            AND d.refclassid OPERATOR(${G}.=) '${G}.pg_proc'::${G}.regclass AND d.refobjid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
         UNION ALL SELECT q.oid FROM ${G}.pg_proc q
          WHERE NOT p.prosecdef AND p.prosqlbody IS NULL AND ${TEXT_LANGUAGE('p')} AND q.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
            AND q.proname OPERATOR(${G}.=) ANY (ARRAY(SELECT ${G}.lower(x.w) FROM ${G}.regexp_split_to_table(p.prosrc, '[^[:alnum:]_$]+') AS x(w))::${G}.name[])) AS e)
     SELECT FROM f JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) f.oid WHERE ${functionReadsSettings('p')})`;
}

/** The functions made since initdb the rules of the view `v` (pg_class) call, by pg_depend. */
const ruleFunctions = (v: string): string =>
  `SELECT d.refobjid FROM ${G}.pg_rewrite w JOIN ${G}.pg_depend d
           ON d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
        WHERE w.ev_class OPERATOR(${G}.=) ${v}.oid AND d.refclassid OPERATOR(${G}.=) '${G}.pg_proc'::${G}.regclass
          AND d.refobjid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}`;

/** True for a function `p` (pg_proc) the planner may inline into the statement's FROM (inline_set_returning_function). */
const inlinable = (p: string): string =>
  `(${p}.prolang IN (SELECT l.oid FROM ${G}.pg_language l WHERE l.lanname OPERATOR(${G}.=) 'sql')
     AND ${p}.prokind OPERATOR(${G}.=) 'f' AND ${p}.proretset AND NOT ${p}.proisstrict AND ${p}.provolatile OPERATOR(${G}.<>) 'v'
     AND NOT ${p}.prosecdef AND ${p}.proconfig IS NULL)`;

/**
 * True when the view `v`, reached by the walk's row `r`, is held inside a security_barrier view:
 * the statement does not name it, every reached relation whose rules read it is a security_barrier
 * view (at least one), and nothing the same root reaches is an inlinable SQL function.
 */
function shielded(r: string, v: string): string {
  const readers = `${G}.pg_rewrite w JOIN ${G}.pg_depend d
           ON d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
          AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass AND d.refobjid OPERATOR(${G}.=) ${v}.oid
         JOIN reach q ON q.oid OPERATOR(${G}.=) w.ev_class AND q.root OPERATOR(${G}.=) ${r}.root AND q.kind OPERATOR(${G}.=) 'r'
         JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) w.ev_class
        WHERE w.ev_class OPERATOR(${G}.<>) ${v}.oid`;
  return `(${r}.root OPERATOR(${G}.<>) ${v}.oid::${G}.regclass::${G}.text
      AND EXISTS (SELECT FROM ${readers})
      AND NOT EXISTS (SELECT FROM ${readers} AND NOT (c.relkind OPERATOR(${G}.=) 'v' AND ${barrier('c')}))
      AND NOT EXISTS (SELECT FROM reach q JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) q.oid
                       WHERE q.root OPERATOR(${G}.=) ${r}.root AND q.kind OPERATOR(${G}.=) 'p' AND ${inlinable('p')}))`;
}

/**
 * What the walk found that filters by a context value without a barrier, as `V <root> reads
 * <view>` or `V <root> calls <function>()`, or NULL: a view made since initdb, not security_barrier
 * nor shielded, that reads a context value (in its rules, or through the functions they call); an
 * inlinable SQL function made since initdb that reads one (in its body or through what it calls).
 */
export function contextBarrierFinding(): string {
  return `COALESCE(
  (SELECT ${G}.concat('V ', r.root, ' reads ', v.relname)
     FROM reach r JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND v.relkind OPERATOR(${G}.=) 'v' AND v.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
      AND NOT ${barrier('v')} AND NOT ${shielded('r', 'v')}
      AND (${viewReadsSettings('v')} OR ${callsReadSettings(ruleFunctions('v'))})
    LIMIT 1),
  (SELECT ${G}.concat('V ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${inlinable('p')}
      AND ${callsReadSettings('SELECT p.oid')}
    LIMIT 1))`;
}

/** The refusal for a finding `V <root> reads <view>` or `V <root> calls <function>()` (what follows the kind), or undefined. */
export function contextBarrierRefusal(what: string): HanactlError | undefined {
  const found = /^(.*) (reads|calls) ([^ ]+)$/s.exec(what);
  if (!found) return undefined;
  const [, root, verb, target] = found as unknown as [string, string, string, string];
  const details = { rule: 'context-barrier' };
  const named = root === target || root.endsWith(`.${target}`) || root.endsWith(`."${target}"`);
  const through = named ? '' : `${root} ${verb} ${target}: `;
  if (verb === 'calls') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${target} is a LANGUAGE sql set-returning function that filters rows by this call's context values, and PostgreSQL inlines it into the statement, where a condition of the statement can run on the rows its filter removes and show their values in an error. A person can replace it with a view WITH (security_barrier = true), or keep the server from inlining it (ALTER FUNCTION ${target.replace(/\(\)$/, '')} VOLATILE, or write it in PL/pgSQL).`,
      { ...details, hint: 'Read through a security_barrier view instead, or ask a person to change the function.' },
    );
  }
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through}${target} is a view that filters rows by this call's context values and is not security_barrier, so PostgreSQL merges it into the statement, where a condition of the statement can run on the rows its filter removes and show their values in an error. A person can make the view keep its filter first: ALTER VIEW ${target} SET (security_barrier = true).`,
    { ...details, hint: 'Read through a security_barrier view instead, or ask a person to set security_barrier on the view.' },
  );
}
