import { HanactlError } from '../../../shared/errors.js';
import { PG_SECRET_SETTINGS } from '../../policy/pg-functions.js';
import { BODY_WORDS, FIRST_NORMAL_OID, STORED_TREES, TEXT_LANGUAGE } from './postgres-reach.js';

/**
 * Settings read wholesale, where one that can hold a secret is set (pg-functions.ts'
 * PG_SECRET_SETTINGS: a standby's primary_conninfo with its replication password, a restore or
 * archive command that carries one). The statement check refuses those settings by name; a read
 * that does not name them (SHOW ALL, pg_settings, pg_show_all_settings(), current_setting() of a
 * name built when it runs) returns them too. Refusing every such read would block much ordinary
 * use, so the walk refuses one only where the server holds such a setting, non-empty, that the
 * login may read: pg_settings, asked as the login in the call's transaction, leaves out what it
 * may not (a setting only superusers and pg_read_all_settings members read) and shows
 * archive_command as `(disabled)` while archiving is off.
 *
 * What the walk finds (postgres-reach.ts), as `A <root> reads <what>`: the statement's own read
 * (`direct`, StatementReferences' settings); pg_settings, the relation initdb made, named by the
 * statement or reached through a view, a rule, a policy or a BEGIN ATOMIC body; in the stored trees of
 * objects created since initdb, a call of pg_show_all_settings() by OID, or of current_setting()
 * whose first argument is not a constant; a built-in of those names a person's object reaches
 * (an operator's function, an internal function's body); and in a SQL or PL/pgSQL text body the
 * words pg_settings, pg_show_all_settings or current_setting (coarse: the text is not parsed; a
 * SECURITY DEFINER function is refused apart, hanactl's context function, which reads only mcp.*
 * values, aside).
 */

const G = 'pg_catalog';

const quoted = (names: readonly string[]): string => names.map((n) => `'${n.replaceAll("'", "''")}'`).join(', ');

/** True where the server holds a setting that can carry a secret, non-empty and readable by the login. */
export function secretSettingHeld(names: readonly string[] = PG_SECRET_SETTINGS): string {
  return `EXISTS (SELECT FROM ${G}.pg_settings s
   WHERE s.name OPERATOR(${G}.=) ANY (ARRAY[${quoted(names)}]::${G}.text[])
     AND s.setting OPERATOR(${G}.<>) '' AND s.setting OPERATOR(${G}.<>) '(disabled)')`;
}

/** A FuncExpr's first argument's node name (m[2]) by the function's OID (m[1]), as nodeToString writes it. */
const FIRST_ARGUMENT =
  '\\{FUNCEXPR :funcid (\\d+) :funcresulttype \\d+ :funcretset \\w+ :funcvariadic \\w+ :funcformat \\d+ :funccollid \\d+ :inputcollid \\d+ :args \\(\\{(\\w+)';

/** True when the stored tree `tree` calls pg_show_all_settings(), or current_setting() of a first argument that is not a constant, by OID. */
export function readsSettingsWholesale(tree: string): string {
  return `(EXISTS (SELECT FROM ${G}.regexp_matches(${tree}, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
                  JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) ${G}.oidin(${G}.textout(m[1]))
                 WHERE p.proname OPERATOR(${G}.=) 'pg_show_all_settings')
        OR EXISTS (SELECT FROM ${G}.regexp_matches(${tree}, '${FIRST_ARGUMENT}', 'g') AS m
                  JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) ${G}.oidin(${G}.textout(m[1]))
                 WHERE p.proname OPERATOR(${G}.=) 'current_setting' AND m[2] OPERATOR(${G}.<>) 'CONST'))`;
}

/** What the walk found of a wholesale read of settings, as `A <root> reads <what>`, or NULL when there is none or no secret setting is held. */
export function settingsFinding(direct: string | undefined): string {
  const own = direct === undefined ? '' : `${quoted([`A ${direct} reads every setting`])}::${G}.text,\n  `;
  return `(SELECT CASE WHEN ${secretSettingHeld()} THEN COALESCE(
  ${own}(SELECT ${G}.concat('A ', r.root, ' reads pg_settings')
     FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) ANY ('{r,w}'::${G}.text[]) AND c.relname OPERATOR(${G}.=) 'pg_settings'
      AND c.relnamespace OPERATOR(${G}.=) 'pg_catalog'::${G}.regnamespace AND c.oid OPERATOR(${G}.<) ${FIRST_NORMAL_OID}
    LIMIT 1),
  (SELECT ${G}.concat('A ', r.root, ' calls ', p.proname, '()')
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
     CROSS JOIN LATERAL ${G}.regexp_matches(t.tree, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
     JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) ${G}.oidin(${G}.textout(m[1]))
    WHERE r.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND p.proname OPERATOR(${G}.=) 'pg_show_all_settings'
    LIMIT 1),
  (SELECT ${G}.concat('A ', r.root, ' calls ', p.proname, '()')
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
     CROSS JOIN LATERAL ${G}.regexp_matches(t.tree, '${FIRST_ARGUMENT}', 'g') AS m
     JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) ${G}.oidin(${G}.textout(m[1]))
    WHERE r.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND p.proname OPERATOR(${G}.=) 'current_setting' AND m[2] OPERATOR(${G}.<>) 'CONST'
    LIMIT 1),
  (SELECT ${G}.concat('A ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.proname OPERATOR(${G}.=) ANY ('{pg_show_all_settings,current_setting}'::${G}.name[])
      AND r.root OPERATOR(${G}.<>) ${G}.concat(p.proname, '()')
    LIMIT 1),
  (SELECT ${G}.concat('A ', r.root, ' calls ', x.w)
     FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
     CROSS JOIN LATERAL ${G}.unnest(${BODY_WORDS}) AS x(w)
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND ${G}.lower(x.w) OPERATOR(${G}.=) ANY ('{pg_settings,pg_show_all_settings,current_setting}'::${G}.text[])
    LIMIT 1)) END)`;
}

/** The refusal for the walk's `A` finding, `what` after the letter. */
export function settingsRefusal(what: string): HanactlError {
  const through = what.endsWith(' reads every setting')
    ? what.replace(/ reads every setting$/, '')
    : `${what} (through the objects it uses)`;
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through} reads the server's settings wholesale, and this server holds a setting the login may read that can carry a password (${PG_SECRET_SETTINGS.join(', ')}), which hanactl does not return on any connection.`,
    { rule: 'credential-read', hint: "Read the settings you need by name: current_setting('name') or SHOW name." },
  );
}
