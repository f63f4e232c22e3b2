import type { PrivilegeProbe } from '../privilege-probe.js';
import { viewFilters } from './postgres-context-barrier.js';
import { FIRST_NORMAL_OID } from './postgres-reach.js';

/** How many of the tables a login bypasses the separation warning names. */
const NAMED_TABLES = 5;

/**
 * Tables under row-level security, created since initdb, that are not FORCE ROW LEVEL SECURITY and
 * whose owner's privileges the login has (pg_has_role's USAGE, the server's has_privs_of_role): their
 * policies do not bind it (check_enable_rls). As `FROM ... WHERE` over pg_class c.
 */
const OWNED_UNFORCED = `pg_catalog.pg_class c WHERE c.relrowsecurity AND NOT c.relforcerowsecurity AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
            AND c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND pg_catalog.pg_has_role(c.relowner, 'USAGE')`;

/**
 * The defaults a new backend of the login applies on this database (pg_db_role_setting: the
 * login's own, in this database or all, `ALTER ROLE ALL`'s, and the database's, as miscinit.c's
 * process_settings reads them) that decide whose rights or which rows a call has: `role`,
 * `session_authorization`, `row_security`. Asked of SESSION_USER, since such a default may already
 * have made CURRENT_USER another role.
 */
const ROLE_DEFAULTS = `(SELECT pg_catalog.string_agg(c.setting, ', ' ORDER BY c.setting)
             FROM pg_catalog.pg_db_role_setting s CROSS JOIN LATERAL pg_catalog.unnest(s.setconfig) AS c(setting)
            WHERE s.setrole OPERATOR(pg_catalog.=) ANY (ARRAY[0::pg_catalog.oid, (SELECT o.oid FROM pg_catalog.pg_roles o WHERE o.rolname OPERATOR(pg_catalog.=) SESSION_USER)])
              AND s.setdatabase OPERATOR(pg_catalog.=) ANY (ARRAY[0::pg_catalog.oid, (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())])
              AND pg_catalog.lower(pg_catalog.split_part(c.setting, '=', 1)) OPERATOR(pg_catalog.=) ANY ('{role,session_authorization,row_security}'::pg_catalog.text[]))`;

/**
 * The schemas on the login's search path it may create objects in (current_schemas(false), which
 * holds the `"$user"` schema when it exists, and that schema by name too), as quoted names in path
 * order, or NULL: every caller of a connection with context names is the login, so a table or
 * function another client of the login makes there shadows the person's of the same name in a
 * later schema (or overloads it), for every caller.
 */
const CREATE_ON_PATH = `(SELECT pg_catalog.string_agg(pg_catalog.quote_ident(s.name), ', ' ORDER BY s.at)
             FROM (SELECT DISTINCT ON (x.name) x.name, x.at
                     FROM (SELECT c.name, c.at FROM pg_catalog.unnest(pg_catalog.current_schemas(false)) WITH ORDINALITY AS c(name, at)
                           UNION ALL SELECT n.nspname, 0 FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) SESSION_USER) AS x
                    ORDER BY x.name, x.at DESC) AS s
            WHERE pg_catalog.has_schema_privilege(s.name, 'CREATE'))`;

/**
 * Views created since initdb that the login may INSERT into or UPDATE, that filter rows
 * (filtersRows) and have no check option: a write through one may leave rows its condition hides,
 * and the resolve step refuses such writes on a writable connection (postgres-check-option.ts).
 * As regclass text, `, `-separated and at most NAMED_TABLES of them, or NULL.
 */
const UNCHECKED_VIEWS = `(SELECT pg_catalog.string_agg(t.name, ', ' ORDER BY t.name)
             FROM (SELECT pg_catalog.textin(pg_catalog.regclassout(c.oid::pg_catalog.regclass)) AS name FROM pg_catalog.pg_class c
                    WHERE c.relkind OPERATOR(pg_catalog.=) 'v' AND c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
                      AND (pg_catalog.has_table_privilege(c.oid, 'INSERT') OR pg_catalog.has_table_privilege(c.oid, 'UPDATE'))
                      AND NOT EXISTS (SELECT FROM pg_catalog.unnest(c.reloptions) AS o(opt) WHERE o.opt OPERATOR(pg_catalog.~*) '^check_option=(local|cascaded)$')
                      AND ${viewFilters('c')}
                    ORDER BY 1 LIMIT ${NAMED_TABLES}) AS t)`;

/**
 * Where rows are separated: a login that row-level security does not bind (a superuser or BYPASSRLS,
 * its own attributes; the owner of a table without FORCE, or a role with its owner's privileges)
 * reads every caller's rows of such a table, and the resolve step refuses what reaches one
 * (postgres-owner-rights.ts); and a login whose sessions start as another role (ROLE_DEFAULTS).
 * Asked of the connection's database.
 */
const SEPARATION_PROBE: Omit<PrivilegeProbe, 'separation' | 'database'> = {
  sql: `SELECT r.rolsuper AS superuser, r.rolbypassrls AS bypassrls,
          (SELECT pg_catalog.count(*) FROM ${OWNED_UNFORCED})::int AS owned,
          (SELECT pg_catalog.string_agg(t.name, ', ' ORDER BY t.name)
             FROM (SELECT pg_catalog.textin(pg_catalog.regclassout(c.oid::pg_catalog.regclass)) AS name FROM ${OWNED_UNFORCED}
                   ORDER BY 1 LIMIT ${NAMED_TABLES}) AS t) AS owned_names
          , ${ROLE_DEFAULTS} AS role_defaults, ${CREATE_ON_PATH} AS create_on_path, ${UNCHECKED_VIEWS} AS unchecked_views
        FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER`,
  advice(row, user) {
    const defaults = row.role_defaults ? [roleDefaultsAdvice(user, String(row.role_defaults))] : [];
    const creates = row.create_on_path ? [createOnPathAdvice(user, String(row.create_on_path))] : [];
    const unchecked = row.unchecked_views ? [uncheckedViewsAdvice(user, String(row.unchecked_views))] : [];
    return [...defaults, ...creates, ...bypassAdvice(row, user), ...unchecked];
  },
};

/** The warning for views `found` (`a, b`) the login may write through that filter rows without a check option. */
function uncheckedViewsAdvice(user: string, found: string): string {
  return `${user} separates rows by context values, and its login may INSERT into or UPDATE views that filter rows but have no check option: ${found}. PostgreSQL does not check that a row written through such a view still matches its condition, so a caller could move or plant rows another caller sees; on a writable connection hanactl refuses those writes. Run ALTER VIEW <view> SET (check_option = cascaded).`;
}

/** The warning for role defaults `found` (`name=value, ...`). */
function roleDefaultsAdvice(user: string, found: string): string {
  return `${user} separates rows by context values, but its login starts each session with ${found} (a default set with ALTER ROLE ... SET or ALTER DATABASE ... SET): hanactl runs every call on this connection as the login itself, but other clients of the login run as that role. Remove it with ALTER ROLE <login> RESET role (or IN DATABASE <db>, or ALTER DATABASE <db> RESET role, as it was set).`;
}

/** The warning for schemas `found` (`a, b`) on the login's search path that it may create objects in. */
function createOnPathAdvice(user: string, found: string): string {
  return `${user} separates rows by context values, but its login may create objects in ${found} (on its search path): every caller of this connection is that login, so a table or function another client of the login makes there would shadow the person's of the same name for every caller. hanactl refuses schema changes on this connection; revoke the privilege (REVOKE CREATE ON SCHEMA <schema> FROM <login>) or take the schema off the login's search path (ALTER ROLE <login> SET search_path = ...).`;
}

/** The sentences for a login that row-level security does not bind. */
function bypassAdvice(row: Record<string, unknown>, user: string): string[] {
  const refused = 'hanactl refuses every statement that reaches a table under row-level security on this connection';
  if (row.superuser === true || row.bypassrls === true) {
    const what = row.superuser === true ? 'a PostgreSQL superuser' : 'a role with BYPASSRLS';
    return [
      `${user} separates rows by context values, but logs in as ${what}, which row-level security does not bind: ${refused}. Register it with a login that is neither a superuser nor BYPASSRLS.`,
    ];
  }
  const owned = Number(row.owned);
  if (!(owned > 0)) return [];
  const more = owned > NAMED_TABLES ? `, and ${owned - NAMED_TABLES} more` : '';
  return [
    `${user} separates rows by context values, but its login owns ${owned} table${owned === 1 ? '' : 's'} under row-level security (or has the owner's privileges) without FORCE ROW LEVEL SECURITY, whose policies therefore do not bind it: ${String(row.owned_names)}${more}. hanactl refuses every statement that reaches ${owned === 1 ? 'it' : 'them'} on this connection. Run ALTER TABLE <table> FORCE ROW LEVEL SECURITY, or register the connection with a login that does not own ${owned === 1 ? 'it' : 'them'}.`,
  ];
}

/**
 * A person's casts between two built-in types through a function (only a superuser makes one):
 * the server runs it where ordinary SQL converts between those types, for a cast to a domain over
 * the target or an array of it too, and an implicit or assignment one with no type named at all.
 * As `source AS target, ...`, or NULL.
 */
const BUILTIN_CASTS = `(SELECT pg_catalog.string_agg(pg_catalog.concat(pg_catalog.format_type(k.castsource, NULL), ' AS ', pg_catalog.format_type(k.casttarget, NULL)), ', ' ORDER BY k.oid)
             FROM pg_catalog.pg_cast k
            WHERE k.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND k.castfunc OPERATOR(pg_catalog.<>) 0
              AND k.castsource OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} AND k.casttarget OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID})`;

/** The warning for a database holding a person's casts between built-in types `found`. */
function builtinCastsAdvice(user: string, found: string): string {
  return `${user}'s database holds a cast between built-in types through a function made since initdb (${found}): it changes what ordinary SQL does, since the server runs it wherever it converts between those types (an implicit or assignment one for any statement; an explicit one for a cast to the type, a domain over it or an array of it). hanactl follows it as a call of that function and refuses what it refuses in that function. Drop it with DROP CAST if it is not meant.`;
}

/**
 * A superuser or a role with pg_read_all_data's privileges reads every password hash and user
 * mapping: USAGE, as the server grants them (has_privs_of_role); a NOINHERIT member would need SET
 * ROLE, which hanactl refuses. With context names, also SEPARATION_PROBE; on every connection, a
 * person's cast between built-in types (BUILTIN_CASTS).
 */
export const POSTGRES_PRIVILEGE_PROBE: PrivilegeProbe = {
  sql: `SELECT r.rolsuper AS superuser,
          CASE WHEN pg_catalog.to_regrole('pg_read_all_data') IS NULL THEN false
               ELSE pg_catalog.pg_has_role(CURRENT_USER, 'pg_read_all_data', 'USAGE') END AS read_all_data
        FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER`,
  advice(row, user) {
    if (row.superuser === true)
      return [`${user} logs in as a PostgreSQL superuser, which can read every password hash and stored password on the server.`];
    if (row.read_all_data === true)
      return [`${user} logs in as a member of pg_read_all_data, which can read pg_authid and every user mapping.`];
    return [];
  },
  database: {
    sql: `SELECT ${BUILTIN_CASTS} AS builtin_casts`,
    advice: (row, user) => (row.builtin_casts ? [builtinCastsAdvice(user, String(row.builtin_casts))] : []),
  },
  separation: SEPARATION_PROBE,
};
