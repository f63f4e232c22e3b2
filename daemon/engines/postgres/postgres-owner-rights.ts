import { HanactlError } from '../../../shared/errors.js';
import { FIRST_NORMAL_OID } from './postgres-reach.js';

/**
 * Where rows are separated: relations that read a table under row-level security with rights other
 * than the caller's, so that the table's policies do not filter by the call's context values and
 * every caller's rows come back. PostgreSQL runs a view's own reads as its owner unless it is
 * `security_invoker` (a security_invoker view inside it still reads as the caller), and a table's
 * policies do not bind its owner (without FORCE ROW LEVEL SECURITY), a superuser or a BYPASSRLS
 * role, and where they do bind the view's owner they are the policies that apply to its roles, which
 * may show it more than the caller (a policy `TO owner USING (true)`); a materialized view's rows were computed once, by whoever refreshed it; a foreign table's
 * rows come from another session, as the user mapping's role, which carries none of the call's
 * context values. A partition or inheritance child holds rows of its parent but has policies of its
 * own (none, unless a person made them): the parent's apply only when the parent is read, and
 * `GRANT SELECT ON ALL TABLES IN SCHEMA` grants the children too. The grant is the person's, but on
 * a connection that promises separation it is a trap, so the resolve step refuses it (rule
 * `owner-rights`), naming what a person can change.
 */

const G = 'pg_catalog';

/** True when the view `v` (pg_class) runs its reads as the caller: security_invoker set to a true value, as the server's boolean parser reads it. */
export const invoker = (v: string): string =>
  `EXISTS (SELECT FROM ${G}.unnest(${v}.reloptions) AS o(opt) WHERE o.opt OPERATOR(${G}.~*) '^security_invoker=(t|tr|tru|true|y|ye|yes|on|1)$')`;

/** The relations the rewrite rules of relation `rel` (an OID expression) read, as pg_depend rows `d`, joined by index. */
const ruleReads = (rel: string): string =>
  `${G}.pg_rewrite w JOIN ${G}.pg_depend d ON d.classid OPERATOR(${G}.=) '${G}.pg_rewrite'::${G}.regclass AND d.objid OPERATOR(${G}.=) w.oid
        AND d.refclassid OPERATOR(${G}.=) '${G}.pg_class'::${G}.regclass AND d.refobjid OPERATOR(${G}.<>) ${rel}
      WHERE w.ev_class OPERATOR(${G}.=) ${rel}`;

/**
 * True for a view or materialized view `a` (pg_class) that could read a table under row security
 * with other rights than the caller's: a materialized view, or a view that is not security_invoker,
 * whose rules read such a table directly; or a view, not security_invoker, owned by a role the login
 * can become without its privileges (becomable), whatever it reads. The view stage
 * (postgres-settled.ts) leaves it to the walk.
 */
export function ownerRightsCandidate(a: string): string {
  return `((${a}.relkind OPERATOR(${G}.=) 'm' OR (${a}.relkind OPERATOR(${G}.=) 'v' AND NOT ${invoker(a)}))
     AND EXISTS (SELECT FROM ${ruleReads(`${a}.oid`)}
                   AND EXISTS (SELECT FROM ${G}.pg_class t WHERE t.oid OPERATOR(${G}.=) d.refobjid AND t.relrowsecurity)))
     OR (${a}.relkind OPERATOR(${G}.=) 'v' AND NOT ${invoker(a)} AND ${becomable(`${a}.relowner`)})`;
}

/** True when the relation `a` (pg_class) is a partition or an inheritance child, by pg_inherits' index on the child. */
export function childRelation(a: string): string {
  return `EXISTS (SELECT FROM ${G}.pg_inherits i WHERE i.inhrelid OPERATOR(${G}.=) ${a}.oid)`;
}

/**
 * True when the current user has the privileges of role `role` (an OID expression), as the server
 * tests it wherever it asks whose rights a user holds (has_privs_of_role: pg_has_role's `USAGE`):
 * a superuser has every role's; a NOINHERIT member, or on PostgreSQL 16 a member by a grant WITH
 * INHERIT FALSE, has them only after SET ROLE (which the statement check refuses, as it refuses a
 * function's `SET role`), so `MEMBER` would count a role whose rights the statement never has.
 */
const hasPrivsOf = (user: string, role: string): string => `${G}.pg_has_role(${user}, ${role}, 'USAGE')`;

/**
 * True when the row security of relation `a` (pg_class) does not bind the current user on a read,
 * as the server's check_enable_rls (utils/misc/rls.c) decides it: row security on, a relation
 * created since initdb, and the user a superuser or BYPASSRLS (its own attributes: neither is
 * inherited), or with the privileges of the relation's owner (pg_class_ownercheck) while the relation is not
 * FORCE ROW LEVEL SECURITY. The `row_security` setting changes nothing here: off, a read the policies
 * would bind fails instead of answering (and the statement check refuses setting it).
 */
export function loginBypasses(a: string): string {
  return `(${a}.relrowsecurity AND ${a}.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
        AND ((NOT ${a}.relforcerowsecurity AND ${hasPrivsOf('CURRENT_USER', `${a}.relowner`)})
             OR EXISTS (SELECT FROM ${G}.pg_roles o WHERE o.rolname OPERATOR(${G}.=) CURRENT_USER AND (o.rolsuper OR o.rolbypassrls))))`;
}

/**
 * True when the role `role` (an OID expression) is one the current user can become (a member of it:
 * SET ROLE, and so ALTER ... OWNER TO it) without having its privileges (a NOINHERIT member, or on
 * PostgreSQL 16 a member WITH INHERIT FALSE): an object it owns may have been handed to it by the
 * login itself, to run with rights the login does not have.
 */
const becomable = (role: string): string => `${G}.pg_has_role(CURRENT_USER, ${role}, 'MEMBER') AND NOT ${hasPrivsOf('CURRENT_USER', role)}`;

/** Why the current user is not bound (loginBypasses): `s` a superuser, `y` BYPASSRLS, `o` the owner's privileges. */
const BYPASS_REASON = `(SELECT CASE WHEN o.rolsuper THEN 's' WHEN o.rolbypassrls THEN 'y' ELSE 'o' END
       FROM ${G}.pg_roles o WHERE o.rolname OPERATOR(${G}.=) CURRENT_USER)`;

/**
 * True when the policy `y` (pg_policy) applies to the role `role` (an OID or a name), as the server's
 * check_role_for_policy (rewrite/rowsecurity.c) decides: to PUBLIC, or to a role whose privileges
 * it has (hasPrivsOf), not to every member.
 */
const appliesTo = (y: string, role: string): string =>
  `(0::${G}.oid OPERATOR(${G}.=) ANY (${y}.polroles)
     OR EXISTS (SELECT FROM ${G}.unnest(${y}.polroles) AS g(role) WHERE g.role OPERATOR(${G}.<>) 0 AND ${hasPrivsOf(role, 'g.role')}))`;

/**
 * A view `v` (pg_class) that reads the table `t` (pg_class) under row security: the table's
 * policies y (pg_policy) for SELECT that let the view's owner see more than the caller, as
 * `+<name>` (a permissive one that applies to the owner and not the caller) or `-<name>` (a
 * restrictive one that applies to the caller and not the owner). The owner then sees no more than
 * the caller only when there is none.
 */
const ownerSeesMore = (v: string, t: string): string =>
  `SELECT ${G}.concat(CASE WHEN y.polpermissive THEN '+' ELSE '-' END, y.polname) AS policy FROM ${G}.pg_policy y
    WHERE y.polrelid OPERATOR(${G}.=) ${t}.oid AND y.polcmd OPERATOR(${G}.=) ANY ('{r,*}'::${G}."char"[])
      AND CASE WHEN y.polpermissive THEN ${appliesTo('y', `${v}.relowner`)} AND NOT ${appliesTo('y', 'CURRENT_USER')}
               ELSE ${appliesTo('y', 'CURRENT_USER')} AND NOT ${appliesTo('y', `${v}.relowner`)} END`;

/**
 * True when the walk's row `r` reaches the relation `c` (pg_class) as a child read through one of
 * its parents: the same root reaches a parent. The server then applies the row security of the
 * relation the statement reads to the children's rows, never the child's own.
 */
const throughParent = (r: string, c: string): string =>
  `EXISTS (SELECT FROM reach q JOIN ${G}.pg_inherits i ON i.inhparent OPERATOR(${G}.=) q.oid
            WHERE i.inhrelid OPERATOR(${G}.=) ${c}.oid AND q.root OPERATOR(${G}.=) ${r}.root AND q.kind OPERATOR(${G}.=) 'r')`;

/**
 * What the walk (`reach`, postgres-reach.ts) found that reads a table under row security with other
 * rights than the caller's, as `O <root> reads <relation> over <table> as <v|m|f|c>` (or `as p
 * <+|-><policy>`, `as b<s|y|o>`), or NULL: a table under row security that does not bind the login
 * itself (loginBypasses; `as b` and why: a superuser, BYPASSRLS, its owner's privileges without
 * FORCE), wherever it is reached but as a child read through its parent; a view created since initdb,
 * not security_invoker, whose rules read
 * such a table and whose owner the table's policies do not bind (its owner or a role that has its
 * rights, without FORCE ROW LEVEL SECURITY; a superuser; BYPASSRLS), or bind less than the caller
 * (ownerSeesMore: a policy for SELECT that applies to the owner's roles and not the caller's, or a
 * restrictive one that applies to the caller's and not the owner's); a materialized view whose rules read such a table directly or
 * through views, to any depth; a foreign table (`over` its server); a partition or inheritance child
 * (at any depth) of a table under row security (`over` that ancestor, as `c`), whatever its own row
 * security, when it is read other than through its parent: named, or reached by a root that does
 * not also reach one of its parents (throughParent). Read directly, a child answers under its own
 * policies, which need not be its parent's; whether two sets of policies show the same rows is not
 * decidable from the catalogs (expressions, roles, commands, permissive and restrictive), while
 * reading the parent, with a condition on the partition key where one helps, reads the same rows
 * under the parent's policies, as intended. And the converse (`as u`, `over` the child): a table
 * without row security read other than through a parent, with a partition or child at any depth
 * that has it: the server applies the table's row security (none) to the children's rows, so the
 * child's policies filter nothing then. And (`as n`) a view, not security_invoker, owned by a role the
 * login can become without having its privileges (becomable: a NOINHERIT member, who may have handed
 * the view to it with ALTER VIEW ... OWNER TO), that reads a relation the login itself may not
 * SELECT, with or without row security: the view reads it with that role's rights.
 */
export function ownerRightsFinding(): string {
  return `COALESCE(
  (SELECT ${G}.concat('O ', r.root, ' reads ', c.relname, ' over ', c.relname, ' as b', ${BYPASS_REASON})
     FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND c.relkind OPERATOR(${G}.=) ANY ('{r,p}'::${G}."char"[]) AND ${loginBypasses('c')}
      AND (r.root OPERATOR(${G}.=) ${G}.textin(${G}.regclassout(c.oid::${G}.regclass)) OR NOT ${throughParent('r', 'c')})
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', v.relname, ' over ', t.relname, ' as v')
     FROM reach r JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL (SELECT d.refobjid FROM ${ruleReads('v.oid')}) AS u
     JOIN ${G}.pg_class t ON t.oid OPERATOR(${G}.=) u.refobjid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND v.relkind OPERATOR(${G}.=) 'v' AND v.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
      AND t.relrowsecurity AND NOT ${invoker('v')}
      AND ((${hasPrivsOf('v.relowner', 't.relowner')} AND NOT t.relforcerowsecurity)
           OR EXISTS (SELECT FROM ${G}.pg_roles o WHERE o.oid OPERATOR(${G}.=) v.relowner AND (o.rolsuper OR o.rolbypassrls)))
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', v.relname, ' over ', t.relname, ' as p ', y.policy)
     FROM reach r JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL (SELECT d.refobjid FROM ${ruleReads('v.oid')}) AS u
     JOIN ${G}.pg_class t ON t.oid OPERATOR(${G}.=) u.refobjid
     CROSS JOIN LATERAL (${ownerSeesMore('v', 't')} LIMIT 1) AS y
    WHERE r.kind OPERATOR(${G}.=) 'r' AND v.relkind OPERATOR(${G}.=) 'v' AND v.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID}
      AND t.relrowsecurity AND NOT ${invoker('v')}
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', v.relname, ' over ', t.relname, ' as n')
     FROM reach r JOIN ${G}.pg_class v ON v.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL (SELECT d.refobjid FROM ${ruleReads('v.oid')}) AS u
     JOIN ${G}.pg_class t ON t.oid OPERATOR(${G}.=) u.refobjid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND v.relkind OPERATOR(${G}.=) 'v' AND v.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND NOT ${invoker('v')}
      AND ${becomable('v.relowner')} AND NOT ${G}.has_table_privilege(CURRENT_USER, t.oid, 'SELECT')
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', m.relname, ' over ', t.relname, ' as m')
     FROM reach r JOIN ${G}.pg_class m ON m.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL (
       WITH RECURSIVE under(oid) AS (
         SELECT m.oid
         UNION SELECT d.refobjid FROM under CROSS JOIN LATERAL (SELECT d.refobjid FROM ${ruleReads('under.oid')}) AS d)
       SELECT x.relname FROM under JOIN ${G}.pg_class x ON x.oid OPERATOR(${G}.=) under.oid WHERE x.relrowsecurity LIMIT 1) AS t
    WHERE r.kind OPERATOR(${G}.=) 'r' AND m.relkind OPERATOR(${G}.=) 'm'
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', c.relname, ' over ', s.srvname, ' as f')
     FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
     JOIN ${G}.pg_foreign_table ft ON ft.ftrelid OPERATOR(${G}.=) c.oid
     JOIN ${G}.pg_foreign_server s ON s.oid OPERATOR(${G}.=) ft.ftserver
    WHERE r.kind OPERATOR(${G}.=) 'r' AND c.relkind OPERATOR(${G}.=) 'f'
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', c.relname, ' over ', t.relname, ' as c')
     FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL (
       WITH RECURSIVE up(oid) AS (
         SELECT i.inhparent FROM ${G}.pg_inherits i WHERE i.inhrelid OPERATOR(${G}.=) c.oid
         UNION SELECT i.inhparent FROM up JOIN ${G}.pg_inherits i ON i.inhrelid OPERATOR(${G}.=) up.oid)
       SELECT x.relname FROM up JOIN ${G}.pg_class x ON x.oid OPERATOR(${G}.=) up.oid WHERE x.relrowsecurity LIMIT 1) AS t
    WHERE r.kind OPERATOR(${G}.=) 'r' AND c.relkind OPERATOR(${G}.=) ANY ('{r,p}'::${G}."char"[])
      AND (r.root OPERATOR(${G}.=) ${G}.textin(${G}.regclassout(c.oid::${G}.regclass)) OR NOT ${throughParent('r', 'c')})
    LIMIT 1),
  (SELECT ${G}.concat('O ', r.root, ' reads ', p.relname, ' over ', d.relname, ' as u')
     FROM reach r JOIN ${G}.pg_class p ON p.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL (
       WITH RECURSIVE down(oid) AS (
         SELECT i.inhrelid FROM ${G}.pg_inherits i WHERE i.inhparent OPERATOR(${G}.=) p.oid
         UNION SELECT i.inhrelid FROM down JOIN ${G}.pg_inherits i ON i.inhparent OPERATOR(${G}.=) down.oid)
       SELECT x.relname FROM down JOIN ${G}.pg_class x ON x.oid OPERATOR(${G}.=) down.oid WHERE x.relrowsecurity LIMIT 1) AS d
    WHERE r.kind OPERATOR(${G}.=) 'r' AND p.relkind OPERATOR(${G}.=) ANY ('{r,p}'::${G}."char"[]) AND p.relhassubclass AND NOT p.relrowsecurity
      AND (r.root OPERATOR(${G}.=) ${G}.textin(${G}.regclassout(p.oid::${G}.regclass)) OR NOT ${throughParent('r', 'p')})
    LIMIT 1))`;
}

/** The refusal for a finding `O <what>` (what follows the kind), or undefined when it is not one. */
export function ownerRightsRefusal(what: string): HanactlError | undefined {
  const found = /^(.*) reads (.+?) over (.+?) as ([vmfcun]|b[syo]|p [+-].*)$/s.exec(what);
  if (!found) return undefined;
  const [, root, relation, table, kind] = found as unknown as [string, string, string, string, string];
  const through =
    root === relation || root.endsWith(`.${relation}`) || root.endsWith(`."${relation}"`) ? '' : `${root} reads ${relation}: `;
  const details = { rule: 'owner-rights' };
  if (kind === 'f') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} is a foreign table (server ${table}): its rows come from another session, as the user mapping's role and without this call's context values, so row-level security cannot separate them by caller on this connection. Read local tables under row-level security instead, or ask a person to read it in a database client.`,
      { ...details, hint: 'Read local tables under row-level security instead.' },
    );
  }
  if (kind.startsWith('b')) {
    const why =
      kind === 'bs'
        ? "the connection's login is a superuser, which row-level security does not bind"
        : kind === 'by'
          ? "the connection's login has BYPASSRLS, which row-level security does not bind"
          : `the connection's login owns ${relation} (or has its owner's privileges), and a table's policies do not bind its owner unless it is FORCE ROW LEVEL SECURITY`;
    const remedy =
      kind === 'bo'
        ? `A person can run ALTER TABLE ${relation} FORCE ROW LEVEL SECURITY, or register the connection with a login that does not own ${relation} (nor inherit its owner's privileges).`
        : 'A person can register the connection with a login that is neither a superuser nor BYPASSRLS.';
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} is under row-level security, but ${why}, so a read returns every caller's rows and this call's context values separate nothing. ${remedy}`,
      { ...details, hint: 'Ask a person to register this connection with a login that the row-level security of its tables binds.' },
    );
  }
  if (kind === 'n') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} is a view owned by a role the connection's login is a member of without its privileges (a NOINHERIT member), and it reads ${table}, which the login itself may not read: the view reads it with its owner's rights, so it would return rows this call may not see. A person can make the view read as its caller (ALTER VIEW ${relation} SET (security_invoker = true)), or give it an owner the login is not a member of.`,
      { ...details, hint: `Read what the login may read directly; ${relation} reads with another role's rights.` },
    );
  }
  if (kind === 'u') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} has no row-level security, but its partition or inheritance child ${table} has: PostgreSQL applies the row security of the table a statement reads to its children's rows, so reading ${relation} returns every caller's rows of ${table}. Read ${table} directly. A person can give ${relation} row-level security and the policy (ALTER TABLE ${relation} ENABLE ROW LEVEL SECURITY), which then applies to the rows of all its children.`,
      { ...details, hint: `Read ${table} directly; it shows the rows this call may see.` },
    );
  }
  if (kind === 'c') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} is a partition or inheritance child of ${table}, a table under row-level security, and the policies of ${table} apply to its rows only when ${table} is read: read directly, ${relation} answers under its own policies (none unless a person made them), not those of ${table}. Read ${table} instead (a condition on its partition key reads the same part). A person can grant only the parent (REVOKE SELECT ON ${relation} FROM the connection's role).`,
      { ...details, hint: `Read ${table} directly; it shows the rows of ${relation} this call may see.` },
    );
  }
  if (kind === 'm') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} is a materialized view over ${table}, a table under row-level security: its rows were computed once, with the rights of whoever refreshed it, and are not filtered by this call's context values. Read ${table} instead; a person can replace ${relation} with a view WITH (security_invoker = true).`,
      { ...details, hint: `Read ${table}, or a security_invoker view over it, instead.` },
    );
  }
  const remedy = `A person can make the view read as its caller: ALTER VIEW ${relation} SET (security_invoker = true).`;
  const hint = `Read ${table} directly; it shows the rows this call may see.`;
  if (kind.startsWith('p ')) {
    const policy = kind.slice(3);
    const why = kind.startsWith('p +')
      ? `the policy ${policy} of ${table} applies to that owner (to it, to PUBLIC or to a role it is a member of) and not to the connection's role`
      : `the restrictive policy ${policy} of ${table} limits the connection's role and not that owner`;
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through}${relation} is a view that reads ${table}, a table under row-level security, with its owner's rights, and ${why}, so the view would return rows this call may not see. ${remedy}`,
      { ...details, hint },
    );
  }
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through}${relation} is a view that reads ${table}, a table under row-level security, with its owner's rights, and the policies of ${table} do not bind that owner, so the view would return every caller's rows. ${remedy} (ALTER TABLE ${table} FORCE ROW LEVEL SECURITY binds the table's owner too, but the view still reads with its owner's policies, which must then show that owner no more than the connection's role.)`,
    { ...details, hint },
  );
}
