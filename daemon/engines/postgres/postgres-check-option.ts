import { HanactlError } from '../../../shared/errors.js';
import { viewFilters } from './postgres-context-barrier.js';
import { FIRST_NORMAL_OID } from './postgres-reach.js';

/**
 * Where rows are separated: a write through a view that filters rows must not leave rows the view
 * hides. PostgreSQL writes through an automatically updatable view to the relation beneath it
 * (rewriteHandler.c, rewriteTargetView) and checks the rows an INSERT or UPDATE leaves against the
 * view's condition only when the view has a check option (`check_option=local`, or `cascaded`, in
 * pg_class.reloptions), or a view above it in the same write has CASCADED: LOCAL checks that
 * view's own condition, CASCADED also those of every view beneath, whatever their own option.
 * Without one, `UPDATE v SET customer_id = 2` or `INSERT INTO v (customer_id) VALUES (2)` through
 * a view over `customer_id = <this call's value>` answers "1 row" and hands the row to another
 * caller. A DELETE creates no row; row-level security policies check new rows already (USING
 * stands for WITH CHECK where a policy has none).
 *
 * A view with an INSTEAD OF row trigger for the write's event, or an unconditional DO INSTEAD rule
 * for it, is not written through: its trigger's or rule's code writes what it writes (the walk
 * judges that code as for any write), check options do not apply to it, and the views beneath it
 * are not the write's. The walk down follows what each view's SELECT rule reads (pg_depend), so a
 * relation its condition reads in a sublink is followed as well: a view there that filters rows
 * without a check option is refused too, which errs on the side of refusing.
 */

const G = 'pg_catalog';

/** True when the view `v` (pg_class) has a check option (LOCAL or CASCADED), as reloptions hold it. */
const checks = (v: string): string =>
  `EXISTS (SELECT FROM ${G}.unnest(${v}.reloptions) AS o(opt) WHERE o.opt OPERATOR(${G}.~*) '^check_option=(local|cascaded)$')`;

/** True when the view `v` (pg_class) has WITH CASCADED CHECK OPTION. */
const cascaded = (v: string): string =>
  `EXISTS (SELECT FROM ${G}.unnest(${v}.reloptions) AS o(opt) WHERE o.opt OPERATOR(${G}.~*) '^check_option=cascaded$')`;

/**
 * True when the view `v` (pg_class) takes the event itself: an enabled INSTEAD OF row trigger for
 * it (tgtype: ROW 1, INSERT 4, UPDATE 16, INSTEAD 64) or an unconditional DO INSTEAD rule for it
 * (ev_type '3' INSERT, '2' UPDATE).
 */
const takes = (v: string, bit: number, event: string): string =>
  `(EXISTS (SELECT FROM ${G}.pg_trigger g WHERE g.tgrelid OPERATOR(${G}.=) ${v}.oid AND g.tgenabled OPERATOR(${G}.<>) 'D'
             AND (g.tgtype::${G}.int4 OPERATOR(${G}.&) ${64 + bit + 1}) OPERATOR(${G}.=) ${64 + bit + 1})
    OR EXISTS (SELECT FROM ${G}.pg_rewrite w WHERE w.ev_class OPERATOR(${G}.=) ${v}.oid AND w.ev_type OPERATOR(${G}.=) '${event}'
                AND w.is_instead AND w.ev_qual::${G}.text OPERATOR(${G}.=) '<>'))`;

/** True when the view `v` takes every event `c` (a chain row: `ins`, `upd`) of the write itself (takes). */
const takesAll = (v: string, c: string): string => `((NOT ${c}.ins OR ${takes(v, 4, '3')}) AND (NOT ${c}.upd OR ${takes(v, 16, '2')}))`;

/**
 * What a write creates rows through without a check, as `G <root> writes <view>`, or NULL: a view
 * created since initdb that filters rows (filtersRows), reached from a relation the statement
 * inserts into ($10) or updates ($11) through views written through (not taking the event
 * themselves: takesAll), with no check option of its own and no CASCADED one above it.
 */
export function checkOptionFinding(): string {
  return `(WITH RECURSIVE target(name, ins, upd) AS (
    SELECT n.name, ${G}.bool_or(n.ev OPERATOR(${G}.=) 'i'), ${G}.bool_or(n.ev OPERATOR(${G}.=) 'u')
      FROM (SELECT i.name, 'i'::${G}.text FROM ${G}.unnest($10::${G}.text[]) AS i(name)
            UNION ALL SELECT u.name, 'u'::${G}.text FROM ${G}.unnest($11::${G}.text[]) AS u(name)) AS n(name, ev)
     GROUP BY n.name),
  chain(root, oid, covered, ins, upd) AS (
    SELECT ${G}.textin(${G}.regclassout(r)), r::${G}.oid, false, t.ins, t.upd
      FROM target t CROSS JOIN LATERAL ${G}.to_regclass(t.name) AS r WHERE r IS NOT NULL
    UNION
    SELECT c.root, d.refobjid, c.covered OR ${cascaded('v')}, c.ins, c.upd
      FROM chain c JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) c.oid AND v.relkind OPERATOR(${G}.=) 'v'
      JOIN ${G}.pg_rewrite w ON w.ev_class OPERATOR(${G}.=) v.oid AND w.ev_type OPERATOR(${G}.=) '1'
      JOIN ${G}.pg_depend d ON d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
       AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass AND d.refobjid OPERATOR(${G}.<>) v.oid
     WHERE NOT ${takesAll('v', 'c')})
  SELECT ${G}.concat('G ', c.root, ' writes ', ${G}.textin(${G}.regclassout(v.oid::${G}.regclass)))
    FROM chain c JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) c.oid
   WHERE v.relkind OPERATOR(${G}.=) 'v' AND v.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND NOT c.covered
     AND NOT ${checks('v')} AND NOT ${takesAll('v', 'c')} AND ${viewFilters('v')}
   LIMIT 1)`;
}

/** The refusal for a finding `G <root> writes <view>` (what follows the kind), or undefined. */
export function checkOptionRefusal(what: string): HanactlError | undefined {
  const found = /^(.*?) writes (.+)$/s.exec(what);
  if (!found) return undefined;
  const [, root, view] = found as unknown as [string, string, string];
  const named = root === view;
  const where = named ? `${view} is a view` : `${root} writes through ${view}, a view`;
  const remedy = named
    ? `ALTER VIEW ${view} SET (check_option = cascaded)`
    : `ALTER VIEW ${root} SET (check_option = cascaded), which checks the conditions of ${view} and every view beneath too`;
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${where} that filters rows and has no check option (nor a CASCADED one above it), so PostgreSQL writes through it without checking that the rows an INSERT or UPDATE leaves still match its condition: a write could create or move rows the view hides, which another caller then sees. A person can make the view check them: ${remedy}. A DELETE through it is not affected.`,
    {
      rule: 'view-check-option',
      hint: 'Ask a person to give the view WITH CASCADED CHECK OPTION; until then, write only through views that check their rows.',
    },
  );
}
