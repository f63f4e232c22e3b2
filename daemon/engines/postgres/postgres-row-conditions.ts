import { HanactlError } from '../../../shared/errors.js';
import type { ConditionSite } from '../../policy/pg-row-conditions.js';
import type { StatementReferences } from '../../policy/types.js';
import { barrier } from './postgres-context-barrier.js';
import { FIRST_NORMAL_OID } from './postgres-reach.js';

/**
 * Where rows are separated: a call in the statement's conditions on no column of the row
 * (ConditionSite, daemon/policy/pg-row-conditions.ts), which PostgreSQL may run on the rows a
 * row-security policy or a security_barrier view hides before their filter (contain_leaked_vars,
 * order_qual_clauses), is judged against the catalog. It may run there when every function it may
 * call (every function of each name, every operator of each name, the input and cast functions of
 * each type it casts to) is one that tells nothing of the rows it runs on:
 *
 * - LEAKPROOF (pg_proc.proleakproof): PostgreSQL's own promise of no error, no side effect and
 *   nothing else that depends on its arguments;
 * - an aggregate or a window function: it runs on the rows the filter kept;
 * - one of REVIEWED, built-in;
 *
 * or when every value it starts from is a constant or a parameter and every function it may call
 * is IMMUTABLE: the planner then computes it once before any row is read (eval_const_expressions),
 * so an error it raises is raised whatever the rows.
 *
 * Anything else (has_table_privilege, current_setting, regclass input, nextval, pg_sleep, date
 * arithmetic on now(), which fails for a far enough interval) could fail, write or wait on a hidden
 * row only, and is refused when the statement reaches a table under row security or a
 * security_barrier view.
 */

/**
 * Built-in functions of no argument that cannot fail, write or take a time that depends on
 * anything (checked in PostgreSQL's source: now, transaction_timestamp and statement_timestamp
 * return the transaction's or statement's start time, clock_timestamp the clock
 * (GetCurrentTimestamp), current_database the database's name, current_schema the first schema of
 * the search path or NULL, pg_backend_pid the process id). Their value is the same for every row,
 * hidden or not.
 */
const REVIEWED = [
  'now',
  'transaction_timestamp',
  'statement_timestamp',
  'clock_timestamp',
  'current_database',
  'current_schema',
  'pg_backend_pid',
];

const G = 'pg_catalog';

/** The built-in numeric types by OID (pg_type.dat: int2, int4, int8, numeric, float4, float8), whatever the search path. */
const NUMERIC_TYPES = `'{21,23,20,1700,700,701}'::${G}.oid[]`;

/** The bound value of the sites of `references` (`[{f, o, t, c}]`), as jsonb text. */
export function conditionsValue(references: StatementReferences): string {
  return JSON.stringify(
    (references.conditions ?? []).map((site: ConditionSite) => ({
      f: site.functions,
      o: site.operators,
      t: site.types,
      c: site.constant,
      n: site.numeric,
      ...(site.columns && site.relations ? { u: site.columns, r: site.relations, ...(site.renamed ? { k: site.renamed } : {}) } : {}),
      ...(site.subquery ? { s: true } : {}),
      ...(site.views
        ? {
            v: site.views.filter((pair) => pair[2] >= 0),
            fn: site.views.filter((pair) => pair[2] < 0).map((pair) => pair[0].slice(0, -2)),
            ...(site.viewColumn ? { vc: true } : {}),
          }
        : {}),
    })),
  );
}

const safeProcedure = (p: string): string =>
  `(${p}.proleakproof OR ${p}.prokind OPERATOR(${G}.=) ANY ('{a,w}'::${G}."char"[])
     OR (${p}.oid OPERATOR(${G}.<) ${FIRST_NORMAL_OID} AND ${p}.proname OPERATOR(${G}.=) ANY ('{${REVIEWED.join(',')}}'::${G}.name[])))`;

const notImmutable = (p: string): string => `${p}.provolatile OPERATOR(${G}.<>) 'i'`;

/** One row (kind, name, safe, folds) for each name the site `site` (jsonb) calls. */
function siteNames(site: string): string {
  const names = (key: string): string => `${G}.jsonb_array_elements_text(${site} OPERATOR(${G}.->) '${key}') AS x(name)`;
  const procedure = `${G}.pg_proc p WHERE p.proname OPERATOR(${G}.=) x.name`;
  const operator = `${G}.pg_operator o JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) o.oprcode WHERE o.oprname OPERATOR(${G}.=) x.name`;
  // Numbers written as such are int4, int8 or numeric (make_const), and their operators are those of numeric types.
  const numericOperands = `((${site} OPERATOR(${G}.->>) 'n') OPERATOR(${G}.<>) 'true' OR (o.oprleft OPERATOR(${G}.=) ANY (${NUMERIC_TYPES}) OR o.oprleft OPERATOR(${G}.=) 0) AND o.oprright OPERATOR(${G}.=) ANY (${NUMERIC_TYPES}))`;
  const type = `${G}.pg_type t WHERE t.typname OPERATOR(${G}.=) x.name`;
  const typeFunctions = `(EXISTS (SELECT FROM ${G}.pg_proc p WHERE p.oid OPERATOR(${G}.=) t.typinput::${G}.oid AND ${notImmutable('p')})
        OR EXISTS (SELECT FROM ${G}.pg_cast k JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) k.castfunc
                    WHERE k.casttarget OPERATOR(${G}.=) t.oid AND ${notImmutable('p')}))`;
  return `SELECT 'f' AS kind, x.name, NOT EXISTS (SELECT FROM ${procedure} AND NOT ${safeProcedure('p')}) AS safe,
         NOT EXISTS (SELECT FROM ${procedure} AND ${notImmutable('p')}) AS folds
    FROM ${names('f')}
  UNION ALL SELECT 'o', x.name, NOT EXISTS (SELECT FROM ${operator} AND NOT p.proleakproof),
         NOT EXISTS (SELECT FROM ${operator} AND ${notImmutable('p')} AND ${numericOperands})
    FROM ${names('o')}
  UNION ALL SELECT 't', x.name, NOT EXISTS (SELECT FROM ${type}), NOT EXISTS (SELECT FROM ${type} AND ${typeFunctions})
    FROM ${names('t')}
  UNION ALL SELECT 's', 'sub-select', false, false WHERE (${site} OPERATOR(${G}.->>) 's') OPERATOR(${G}.=) 'true'
  UNION ALL (SELECT 'c', v.name, false, false FROM (${viewPairs(site)}) AS v
              WHERE (${site} OPERATOR(${G}.->>) 'vc') OPERATOR(${G}.=) 'true' LIMIT 1)`;
}

/**
 * True when the site `site` (jsonb) holds unqualified names taken as an outer query's (`u`) and
 * each is a column of a table its level reads (`r`), past the first `k` (its FROM alias list
 * renames those; dropped columns take no alias, as buildRelationAliases skips them): the server
 * reads them as that level's own, so the site is none (its level's second reading holds the sites
 * that remain).
 */
function ownColumns(site: string): string {
  return `(COALESCE(${G}.jsonb_typeof(${site} OPERATOR(${G}.->) 'u'), '') OPERATOR(${G}.=) 'array'
     AND NOT EXISTS (SELECT FROM ${G}.jsonb_array_elements_text(${site} OPERATOR(${G}.->) 'u') AS u(name)
                      WHERE NOT EXISTS (SELECT FROM ${G}.jsonb_array_elements_text(${site} OPERATOR(${G}.->) 'r') WITH ORDINALITY AS r(name, i)
                                          JOIN ${G}.pg_attribute a ON a.attrelid OPERATOR(${G}.=) ${G}.to_regclass(r.name)
                                         WHERE a.attname OPERATOR(${G}.=) u.name AND a.attnum OPERATOR(${G}.>) 0 AND NOT a.attisdropped
                                           AND (SELECT ${G}.count(*) FROM ${G}.pg_attribute b
                                                 WHERE b.attrelid OPERATOR(${G}.=) a.attrelid AND b.attnum OPERATOR(${G}.>) 0
                                                   AND b.attnum OPERATOR(${G}.<=) a.attnum AND NOT b.attisdropped)
                                               OPERATOR(${G}.>) COALESCE(${G}.int8in(${G}.textout((${site} OPERATOR(${G}.->) 'k') OPERATOR(${G}.->>) (r.i OPERATOR(${G}.-) 1)::${G}.int4)), 0))))`;
}

/**
 * True when a view's column `a` (pg_attribute) of view `c` (pg_class) is a plain column of a table
 * (its definition a Var): pulled up, it is a column of the row. Either PostgreSQL says the column
 * is updatable through the view (pg_column_is_updatable: a Var of its one base relation, through
 * nested views), or the view's stored query (pg_rewrite, the _RETURN rule's node tree) reads
 * tables and joins only (no subquery, function, VALUES, CTE, sublink, other view), and its target
 * entry at the column's position is a single Var.
 */
function plainViewColumn(c: string, a: string): string {
  return `(${G}.pg_column_is_updatable(${c}.oid, ${a}.attnum, false)
     OR EXISTS (SELECT FROM ${G}.pg_rewrite w
                 WHERE w.ev_class OPERATOR(${G}.=) ${c}.oid AND w.rulename OPERATOR(${G}.=) '_RETURN'
                   AND NOT (w.ev_action::${G}.text OPERATOR(${G}.~) ':rtekind [13-8]|:hasSubLinks true')
                   AND NOT EXISTS (SELECT FROM ${G}.pg_depend d JOIN ${G}.pg_class r ON r.oid OPERATOR(${G}.=) d.refobjid
                                    WHERE d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
                                      AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass
                                      AND r.relkind OPERATOR(${G}.=) 'v' AND r.oid OPERATOR(${G}.<>) ${c}.oid)
                   AND EXISTS (SELECT FROM ${G}.regexp_split_to_table(w.ev_action::${G}.text, '\\{TARGETENTRY ') AS e(piece)
                                WHERE e.piece OPERATOR(${G}.~) ${G}.concat('^:expr \\{VAR [^{}]*\\} :resno ', ${a}.attnum, ' '))))`;
}

/**
 * The pairs of the site `site` (jsonb `v`: `[relation, column or * for the whole row, position in the alias list or 0]`)
 * that are columns of views whose definition is not a plain column, as `name` (`relation.column`).
 */
function viewPairs(site: string): string {
  return `SELECT q.name FROM (SELECT ${G}.concat(c.relname, '.', a.attname) AS name, p.i
    FROM ${G}.jsonb_array_elements(COALESCE(${site} OPERATOR(${G}.->) 'v', '[]')) WITH ORDINALITY AS p(pair, i)
    JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) ${G}.to_regclass(p.pair OPERATOR(${G}.->>) 0) AND c.relkind OPERATOR(${G}.=) 'v'
    JOIN ${G}.pg_attribute a ON a.attrelid OPERATOR(${G}.=) c.oid AND a.attnum OPERATOR(${G}.>) 0 AND NOT a.attisdropped
     AND CASE WHEN (p.pair OPERATOR(${G}.->>) 1) OPERATOR(${G}.=) '*' THEN true
              WHEN ${G}.int4in(${G}.textout(p.pair OPERATOR(${G}.->>) 2)) OPERATOR(${G}.>) 0
              THEN a.attnum OPERATOR(${G}.=) ${G}.int4in(${G}.textout(p.pair OPERATOR(${G}.->>) 2))
              ELSE a.attname OPERATOR(${G}.=) (p.pair OPERATOR(${G}.->>) 1) END
   WHERE NOT ${plainViewColumn('c', 'a')}
  UNION ALL SELECT ${G}.concat(f.name, '()'), f.i
    FROM ${G}.jsonb_array_elements_text(COALESCE(${site} OPERATOR(${G}.->) 'fn', '[]')) WITH ORDINALITY AS f(name, i)
   WHERE EXISTS (SELECT FROM ${G}.pg_proc g JOIN ${G}.pg_language l ON l.oid OPERATOR(${G}.=) g.prolang
                  WHERE g.proname OPERATOR(${G}.=) f.name AND l.lanname OPERATOR(${G}.=) 'sql' AND g.prokind OPERATOR(${G}.=) 'f'
                    AND g.proretset AND NOT g.proisstrict AND g.provolatile OPERATOR(${G}.<>) 'v' AND NOT g.prosecdef
                    AND g.proconfig IS NULL)) AS q
   ORDER BY q.i`;
}

/**
 * True when the site `site` (jsonb) was read with columns of relations it names taken as views'
 * (`v`) and none of them is a view's column defined otherwise than as a plain column, nor a
 * column of a function in FROM (`fn`) that the planner may inline (a set-returning SQL function,
 * neither STRICT nor VOLATILE nor SECURITY DEFINER, with no SET: inline_set_returning_function):
 * the site is none then (the reading with them as columns holds the sites that remain).
 */
function plainColumns(site: string): string {
  return `(COALESCE(${G}.jsonb_typeof(${site} OPERATOR(${G}.->) 'v'), '') OPERATOR(${G}.=) 'array' AND NOT EXISTS (${viewPairs(site)}))`;
}

/**
 * The first name, as `K <f|o|t> <name>`, that a site of the bound jsonb `param` calls and that may
 * tell hidden rows apart (neither safe nor in a site the planner computes before reading rows), or
 * NULL. With `guard`, only when it holds (the walk's: the statement reaches rows that are hidden).
 */
export function conditionFinding(param: string, guard?: string): string {
  return `(SELECT ${G}.concat('K ', b.kind, ' ', b.name)
     FROM ${G}.jsonb_array_elements(${param}::${G}.jsonb) WITH ORDINALITY AS s(site, i)
     CROSS JOIN LATERAL (${siteNames('s.site')}) AS b
    WHERE NOT b.safe AND NOT ${ownColumns('s.site')} AND NOT ${plainColumns('s.site')}
      AND NOT ((s.site OPERATOR(${G}.->>) 'c') OPERATOR(${G}.=) 'true'
               AND NOT EXISTS (SELECT FROM (${siteNames('s.site')}) AS z WHERE NOT z.folds))${guard ? `\n      AND ${guard}` : ''}
    ORDER BY s.i LIMIT 1)`;
}

/** The walk's guard: a relation it reaches is under row security or a security_barrier view. */
export const REACHES_HIDDEN_ROWS = `EXISTS (SELECT FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
                 WHERE r.kind OPERATOR(${G}.=) ANY ('{r,w}'::${G}.text[])
                   AND (c.relrowsecurity OR (c.relkind OPERATOR(${G}.=) 'v' AND ${barrier('c')})))`;

/** The refusal for a finding `<f|o|t> <name>` (what follows the kind), or undefined. */
export function conditionRefusal(what: string): HanactlError | undefined {
  const found = /^([fotsc]) (.+)$/s.exec(what);
  if (!found) return undefined;
  const [, kind, name] = found as unknown as [string, string, string];
  if (kind === 'c')
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: a condition of this statement (WHERE, JOIN ... ON, HAVING, or the select list of a subquery or CTE) uses ${name.endsWith('()') ? `a column of ${name}, a SQL function in FROM that PostgreSQL inlines,` : `the column ${name} of a view,`} whose definition is not a plain column of a table. PostgreSQL puts that definition in the column's place, and when it holds no column of the row, runs it on the rows the row-security policy (or security_barrier view) hides, before their filter: its error, side effect or time would tell those rows apart. Compare with plain columns of the view, or read the view's column in the select list of the outer query.`,
      {
        rule: 'leaky-condition',
        hint: 'Use the column in the select list of the outer query, which runs only on the rows the policy shows, or filter on plain columns.',
      },
    );
  if (kind === 's')
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: a condition of this statement (WHERE, JOIN ... ON, HAVING, or the select list of a subquery or CTE) holds a sub-select that reads no column of the row (EXISTS, a scalar or ARRAY sub-select), and PostgreSQL runs such a sub-select once, when the condition first needs its value, which may be on a row the row-security policy (or security_barrier view) hides, before their filter: its error or time would tell those rows apart. Compute such a value in a CTE or a subquery joined in FROM, or pass it as a parameter; a sub-select that names a column of the row with its table's name or alias, and IN (SELECT ...), run after the filter and are allowed.`,
      {
        rule: 'leaky-condition',
        hint: "Compute the value in a CTE or a subquery joined in FROM (WITH m AS (SELECT max(x) AS v FROM t) SELECT ... FROM orders, m WHERE amount > m.v), use IN (SELECT ...), refer to a column of the row in the sub-select with its table's name or alias, or compute it on the client and pass it as a parameter ($1).",
      },
    );
  const called = kind === 'f' ? `${name}()` : kind === 'o' ? `the operator ${name}` : `a cast to ${name}`;
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: a condition of this statement (WHERE, JOIN ... ON, HAVING, or the select list of a subquery or CTE) uses ${called} on no column of the row, and PostgreSQL runs such a part of a condition on the rows the row-security policy (or security_barrier view) hides, before their filter: its error, side effect or time would tell those rows apart. Only LEAKPROOF functions, constants, and a few functions that cannot fail (now(), current_database(), ...) may appear there unless a column of the row is among their arguments.`,
    {
      rule: 'leaky-condition',
      hint: `Compute the value on the client and pass it as a parameter ($1), or move ${called} to the select list of the outer query, which runs only on the rows the policy shows; in a subquery, qualify each column with its table's name or alias.`,
    },
  );
}
