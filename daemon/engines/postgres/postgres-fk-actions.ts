import { HanactlError } from '../../../shared/errors.js';
import { BODY_WORDS, FIRST_NORMAL_OID, TEXT_LANGUAGE } from './postgres-reach.js';

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
 *
 * When the call may write, the deletes and updates of the code it reaches count too (a trigger
 * a write fires, a rule, a default, a function or procedure it calls, and what those call:
 * CODE_TARGETS), and a TRUNCATE in that code of a table the login may truncate (TRUNCATES).
 * Since every delete or update an action follows from is refused, no statement that runs fires
 * one: where rows are separated the walk does not follow a key's action to the referencing
 * table's triggers and defaults (reachCte), which an INSERT into the referenced table never runs.
 * A SECURITY DEFINER function is refused wherever the walk reaches it (reachFinding), so none
 * deletes for the call as its owner.
 */

const G = 'pg_catalog';

/** A stored tree (a BEGIN ATOMIC body, a rule's action) holding a DELETE or a MERGE (CmdType 4, 5). */
const TREE_DELETES = (tree: string): string => `${tree} OPERATOR(${G}.~) ':commandType [45] '`;

/** A stored tree holding an UPDATE, a MERGE or an INSERT ... ON CONFLICT DO UPDATE (CmdType 2, 5; OnConflictAction 2). */
const TREE_UPDATES = (tree: string): string =>
  `(${tree} OPERATOR(${G}.~) ':commandType [25] ' OR ${tree} OPERATOR(${G}.~) ':onConflict \\{ONCONFLICTEXPR :action 2 ')`;

/** A text body holding DELETE or MERGE as a word (any case). */
const BODY_DELETES = `p.prosrc OPERATOR(${G}.~*) '\\m(delete|merge)\\M'`;

/** A text body holding UPDATE or MERGE as a word (ON CONFLICT DO UPDATE holds UPDATE). */
const BODY_UPDATES = `p.prosrc OPERATOR(${G}.~*) '\\m(update|merge)\\M'`;

/** The root a reached function (reach r, pg_proc p) is named by: the function itself when the statement calls it, else the root and the function. */
const THROUGH_FUNCTION = `CASE WHEN r.root OPERATOR(${G}.=) ${G}.concat(p.proname, '()') THEN r.root ELSE ${G}.concat(r.root, ' (through ', p.proname, '())') END`;

/** The relations a reached SQL or PL/pgSQL text body (pg_proc p) names as words (BODY_WORDS), made since initdb, as pg_class c. */
const NAMED_BY_BODY = `${G}.pg_proc p CROSS JOIN LATERAL (SELECT ${BODY_WORDS} AS words) AS b
          JOIN ${G}.pg_class c ON c.relname OPERATOR(${G}.=) ANY (ARRAY(SELECT ${G}.name(bw.w) FROM ${G}.unnest(b.words) AS bw(w)))
           AND c.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}`;

/**
 * The relations the code a writing call reaches deletes from or updates, as rows (root, oid, del,
 * upd). The code is not parsed, so each relation it names counts as deleted from when it holds a
 * DELETE or a MERGE, and as updated when it holds an UPDATE, a MERGE or an ON CONFLICT DO UPDATE:
 * each relation a SQL or PL/pgSQL text body names as a word (BODY_DELETES, BODY_UPDATES: the
 * words, in a comment or a string too); each relation a BEGIN ATOMIC body's stored tree names
 * (`:relid`, TREE_DELETES, TREE_UPDATES); each relation named by the action of a rule (not a
 * view's SELECT rule) of a relation the call writes (reach kind w), which the server runs as the
 * rule's owner. An INSERT adds rows, which no key's action follows from. The functions are those
 * the walk reaches (postgres-reach.ts): called, a written table's triggers and defaults, policies,
 * operators, casts, and what their bodies name and call; a SECURITY DEFINER one is refused
 * before (reachFinding), as is one whose body runs SQL text or is in a language not read
 * (runtimeCodeFinding).
 */
const CODE_TARGETS = `SELECT ${THROUGH_FUNCTION}, c.oid, ${BODY_DELETES}, ${BODY_UPDATES}
      FROM reach r JOIN ${NAMED_BY_BODY} ON p.oid OPERATOR(${G}.=) r.oid
     WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE} AND p.prosqlbody IS NULL
       AND (${BODY_DELETES} OR ${BODY_UPDATES})
    UNION ALL SELECT ${THROUGH_FUNCTION}, ${G}.oidin(${G}.textout(m[1])), ${TREE_DELETES(`p.prosqlbody::${G}.text`)}, ${TREE_UPDATES(`p.prosqlbody::${G}.text`)}
      FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
      CROSS JOIN LATERAL ${G}.regexp_matches(p.prosqlbody::${G}.text, ':relid (\\d+)', 'g') AS m
     WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND p.prosqlbody IS NOT NULL
       AND (${TREE_DELETES(`p.prosqlbody::${G}.text`)} OR ${TREE_UPDATES(`p.prosqlbody::${G}.text`)})
    UNION ALL SELECT ${G}.concat(r.root, ' (through rule ', w.rulename, ')'), ${G}.oidin(${G}.textout(m[1])),
                     ${TREE_DELETES(`w.ev_action::${G}.text`)}, ${TREE_UPDATES(`w.ev_action::${G}.text`)}
      FROM reach r JOIN ${G}.pg_rewrite w ON w.ev_class OPERATOR(${G}.=) r.oid AND w.ev_type OPERATOR(${G}.<>) '1'
      CROSS JOIN LATERAL ${G}.regexp_matches(w.ev_action::${G}.text, ':relid (\\d+)', 'g') AS m
     WHERE r.kind OPERATOR(${G}.=) 'w' AND (${TREE_DELETES(`w.ev_action::${G}.text`)} OR ${TREE_UPDATES(`w.ev_action::${G}.text`)})`;

/**
 * A reached SQL or PL/pgSQL text body holding TRUNCATE as a word that names a table this login
 * may truncate (has_table_privilege: such a body runs as the login, a SECURITY DEFINER one being
 * refused before), as `I <root>\nTRUNCATE\n<table>`, or NULL. TRUNCATE empties a table past
 * row-level security, and with CASCADE every table whose foreign key references it, whatever the
 * key's action (ExecuteTruncate, tablecmds.c: the named table's privilege is checked, and each
 * cascaded one's); a table the login may not truncate makes the statement fail. A BEGIN ATOMIC
 * body cannot hold TRUNCATE (the server refuses it), a rule's action neither, and a statement
 * that is one is refused before (shared-schema).
 */
const TRUNCATES = `(SELECT ${G}.concat('I ', ${THROUGH_FUNCTION}, E'\\nTRUNCATE\\n', ${G}.textin(${G}.regclassout(c.oid::${G}.regclass)))
     FROM reach r JOIN ${NAMED_BY_BODY} ON p.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE} AND p.prosqlbody IS NULL
      AND p.prosrc OPERATOR(${G}.~*) '\\mtruncate\\M' AND c.relkind OPERATOR(${G}.=) ANY ('{r,p,f}'::${G}."char"[])
      AND ${G}.has_table_privilege(c.oid, 'TRUNCATE')
    LIMIT 1)`;

/**
 * The first foreign key an action of which the deletes and updates of `targets` (rows (root, oid,
 * del, upd)) carry into another table, as `I <root> <event> <referenced> <constraint>
 * <referencing>` with each name on its own line, or NULL. The targets are followed down through
 * the relations a view's SELECT rule reads and to every inheritance child and partition.
 */
function carried(targets: string): string {
  return `(WITH RECURSIVE chain(root, oid, del, upd) AS (
    ${targets}
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

/** The relations the statement itself updates ($11) and deletes from ($12), as rows (root, oid, del, upd). */
const NAMED_TARGETS = `SELECT ${G}.textin(${G}.regclassout(r)), r::${G}.oid, ${G}.bool_or(n.ev OPERATOR(${G}.=) 'd'), ${G}.bool_or(n.ev OPERATOR(${G}.=) 'u')
      FROM (SELECT u.name, 'u'::${G}.text FROM ${G}.unnest($11::${G}.text[]) AS u(name)
            UNION ALL SELECT d.name, 'd'::${G}.text FROM ${G}.unnest($12::${G}.text[]) AS d(name)) AS n(name, ev)
      CROSS JOIN LATERAL ${G}.to_regclass(n.name) AS r WHERE r IS NOT NULL
     GROUP BY r`;

/**
 * What a write carries into another table through a foreign key's action, as
 * `I <root> <event> <referenced> <constraint> <referencing>` with each name on its own line, or
 * NULL: the statement's own deletes and updates first; with `writes` (the call's transaction may
 * write), then those of the code it reaches (CODE_TARGETS), then a TRUNCATE in that code
 * (TRUNCATES).
 */
export function fkActionFinding(writes: boolean): string {
  const named = carried(NAMED_TARGETS);
  return writes ? `COALESCE(${named}, ${carried(CODE_TARGETS)}, ${TRUNCATES})` : named;
}

/**
 * The refusal for a finding `I <root>\n<event>\n<referenced>\n<constraint>\n<referencing>`, or
 * `I <root>\nTRUNCATE\n<table>` (what follows the kind).
 */
export function fkActionRefusal(what: string): HanactlError {
  const parts = what.split('\n');
  if (parts[1] === 'TRUNCATE' && parts.length === 3) return truncateRefusal(parts[0] as string, parts[2] as string);
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

/** The refusal of code the statement reaches that truncates `table`, which the login may truncate. */
function truncateRefusal(root: string, table: string): HanactlError {
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${root} runs code that truncates ${table} (TRUNCATE in a function's body), which this login may truncate: PostgreSQL empties a table past row-level security, and with CASCADE every table whose foreign key references it, so this would delete rows that context values hide from you, other callers' rows among them. A person can revoke TRUNCATE on ${table} from the login, or run the call on a connection without context names.`,
    {
      rule: 'fk-action',
      hint: `Ask a person to revoke TRUNCATE on ${table} from this login, or to run this on a connection without context names.`,
    },
  );
}
