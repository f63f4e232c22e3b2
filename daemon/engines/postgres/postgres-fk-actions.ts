import { HanactlError } from '../../../shared/errors.js';

/**
 * Where rows are separated: a DELETE or UPDATE of a table a foreign key references must not carry
 * into other callers' rows through the key's referential action. PostgreSQL runs ON DELETE / ON
 * UPDATE CASCADE, SET NULL and SET DEFAULT (pg_constraint.confdeltype / confupdtype 'c', 'n', 'd')
 * from its own triggers (ri_triggers.c) as the referencing table's owner and past row-level
 * security, so `DELETE FROM products WHERE id = 2`, with DELETE granted on a shared `products`,
 * deletes every caller's `orders` rows for that product, which the caller's context hides.
 *
 * The targets are the relations the statement updates ($11: UPDATE, ON CONFLICT DO UPDATE, MERGE
 * ... THEN UPDATE) or deletes from ($12: DELETE, MERGE ... THEN DELETE), followed down through
 * the relations a view's SELECT rule reads (pg_depend: a view written through writes them) and to
 * every inheritance child and partition (pg_inherits: a write to a parent reaches them, and a key
 * referencing a partitioned table has a copy referencing each partition). Any UPDATE counts,
 * whichever columns it sets: a key's referenced columns can change through a rule, a trigger or a
 * view's expression as well as by name. RESTRICT and NO ACTION ('r', 'a') only refuse the write,
 * which tells nothing of hidden rows the unique index's own errors do not tell already.
 */

const G = 'pg_catalog';

/**
 * What a write carries into another table through a foreign key's action, as
 * `I <root> <event> <referenced> <constraint> <referencing>` with each name on its own line, or NULL.
 */
export function fkActionFinding(): string {
  return `(WITH RECURSIVE target(name, del, upd) AS (
    SELECT n.name, ${G}.bool_or(n.ev OPERATOR(${G}.=) 'd'), ${G}.bool_or(n.ev OPERATOR(${G}.=) 'u')
      FROM (SELECT u.name, 'u'::${G}.text FROM ${G}.unnest($11::${G}.text[]) AS u(name)
            UNION ALL SELECT d.name, 'd'::${G}.text FROM ${G}.unnest($12::${G}.text[]) AS d(name)) AS n(name, ev)
     GROUP BY n.name),
  chain(root, oid, del, upd) AS (
    SELECT ${G}.textin(${G}.regclassout(r)), r::${G}.oid, t.del, t.upd
      FROM target t CROSS JOIN LATERAL ${G}.to_regclass(t.name) AS r WHERE r IS NOT NULL
    UNION
    SELECT c.root, e.child, c.del, c.upd
      FROM chain c JOIN (
        SELECT v.oid, d.refobjid
          FROM ${G}.pg_class v JOIN ${G}.pg_rewrite w ON w.ev_class OPERATOR(${G}.=) v.oid AND w.ev_type OPERATOR(${G}.=) '1'
          JOIN ${G}.pg_depend d ON d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
           AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass AND d.refobjid OPERATOR(${G}.<>) v.oid
         WHERE v.relkind OPERATOR(${G}.=) 'v'
        UNION ALL SELECT i.inhparent, i.inhrelid FROM ${G}.pg_inherits i) AS e(parent, child) ON e.parent OPERATOR(${G}.=) c.oid)
  SELECT ${G}.concat('I ', c.root, E'\\n', CASE WHEN c.del AND k.confdeltype OPERATOR(${G}.=) ANY ('{c,n,d}'::${G}."char"[]) THEN 'DELETE' ELSE 'UPDATE' END,
                     E'\\n', ${G}.textin(${G}.regclassout(k.confrelid::${G}.regclass)), E'\\n', ${G}.quote_ident(k.conname::${G}.text),
                     E'\\n', ${G}.textin(${G}.regclassout(k.conrelid::${G}.regclass)))
    FROM chain c JOIN ${G}.pg_constraint k ON k.confrelid OPERATOR(${G}.=) c.oid AND k.contype OPERATOR(${G}.=) 'f'
   WHERE (c.del AND k.confdeltype OPERATOR(${G}.=) ANY ('{c,n,d}'::${G}."char"[]))
      OR (c.upd AND k.confupdtype OPERATOR(${G}.=) ANY ('{c,n,d}'::${G}."char"[]))
   LIMIT 1)`;
}

/** The refusal for a finding `I <root>\n<event>\n<referenced>\n<constraint>\n<referencing>` (what follows the kind). */
export function fkActionRefusal(what: string): HanactlError {
  const parts = what.split('\n');
  // A name holding a line break (quoted) splits into more parts: named generically then.
  const [root, event, referenced, constraint, referencing] = (
    parts.length === 5 ? parts : [parts[0] ?? 'the table', 'DELETE or UPDATE', 'the table', 'a foreign key', 'another table']
  ) as [string, string, string, string, string];
  const through = root === referenced ? referenced : `${root} writes ${referenced}, which`;
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through} is referenced by the foreign key ${constraint} of ${referencing}, whose ON ${event} action (CASCADE, SET NULL or SET DEFAULT) PostgreSQL runs as the table's owner and past row-level security: this ${event} would change or delete rows of ${referencing} that context values hide from you, other callers' rows among them. A person can make the key refuse instead (ALTER TABLE ${referencing} DROP CONSTRAINT ${constraint}, then ADD it again with ON ${event} RESTRICT or NO ACTION), or run the write on a connection without context names.`,
    {
      rule: 'fk-action',
      hint: `Ask a person to make ${constraint} ON ${event} RESTRICT or NO ACTION, or to run this write on a connection without context names.`,
    },
  );
}
