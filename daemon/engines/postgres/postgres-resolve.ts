import { HanactlError } from '../../../shared/errors.js';
import { PG_REFUSED_RELATION_NAMES } from '../../policy/pg-functions.js';
import type { StatementReferences } from '../../policy/types.js';
import { contextFunctionBody } from '../signed-context.js';
import type { BatchStep } from './postgres-batch.js';

/** How many views deep the check follows views over views (as sample_rows does: postgres-reads.ts). */
const MAX_VIEW_DEPTH = 16;

/** The text a refusing resolve step fails with, before what it found. */
export const RESOLVE_MARKER = 'hanactl: refused reference ';

/** `items` as a PostgreSQL text[] literal, for a bound parameter. */
function textArray(items: readonly string[]): string {
  return `{${items.map((item) => `"${item.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/**
 * PostgreSQL's FirstNormalObjectId: every object initdb creates (pg_catalog, information_schema)
 * has a lower OID. The server's own views are judged by name in the policy (pg_roles reads
 * pg_authid and masks it), and its own functions by name (pg-functions.ts); only objects created
 * since (a person's views and functions, an extension's) are followed here.
 */
const FIRST_NORMAL_OID = 16384;

/** Where the schema goes in the verifying function's body ($3), to compare it with pg_proc.prosrc. */
const SCHEMA_MARK = '@SCHEMA@';

/**
 * hanactl's own verifying function (`hanactl context-sql`): SECURITY DEFINER by design, it returns
 * only this call's own signed context value, and a person's view may use it. Recognised by its
 * exact body in its own schema, so a function of that name with any other body is not exempt.
 */
const HANACTL_CONTEXT = `(p.proname OPERATOR(pg_catalog.=) 'context' AND pg_catalog.lower(p.prosrc) OPERATOR(pg_catalog.=) pg_catalog.lower(pg_catalog.replace($3::pg_catalog.text, '${SCHEMA_MARK}', (SELECT ns.nspname::pg_catalog.text FROM pg_catalog.pg_namespace ns WHERE ns.oid OPERATOR(pg_catalog.=) p.pronamespace))))`;

const REFUSED_NAMES = PG_REFUSED_RELATION_NAMES.map((n) => `'${n}'`).join(', ');

/** The text a first check fails with when what the statement names needs the full walk (resolveStep). */
export const FURTHER_MARKER = 'hanactl: resolve further';

const REFUSED_SET: ReadonlySet<string> = new Set(PG_REFUSED_RELATION_NAMES);

/** The last part of a name as regclass text (`"schema"."name"`, each part quoted), as pg_class.relname holds it. */
function relationName(qualified: string): string {
  const last = /"((?:[^"]|"")*)"$/.exec(qualified);
  return last ? (last[1] as string).replaceAll('""', '"') : qualified;
}

/**
 * The step that resolves, in the call's transaction and before the statement runs, what the
 * statement names (undefined when it names nothing). With `walk` it is the full walk (walkStep);
 * without, it is a first check that costs the server a fraction of it (firstCheck), and that
 * fails with FURTHER_MARKER whenever the full walk could find anything; the call is then made
 * again with the walk. A root named as a refused relation goes to the walk at once.
 */
export function resolveStep(references: StatementReferences | undefined, walk: boolean): BatchStep | undefined {
  if (!references || (references.relations.length === 0 && references.functions.length === 0)) return undefined;
  if (walk || references.relations.some((relation) => REFUSED_SET.has(relationName(relation)))) return walkStep(references);
  return firstCheck(references);
}

/**
 * What the full walk (walkStep) can find, asked directly, with neither recursion nor joins, so
 * that the server plans it in a fraction of the time: does a named relation created since initdb
 * have rewrite rules (a view, a materialised view, a table with rules: where the walk goes on
 * reading), or is a function of a called name a SECURITY DEFINER one created since initdb (hanactl's
 * own context() included: the walk tells it apart)? The step fails with FURTHER_MARKER if so.
 * When it does not, the walk would find nothing: it reads rules only of those relations, and the
 * roots' own names are judged before the step is sent (resolveStep). `concat` is STABLE, so the
 * planner does not fold the failing cast into a failure of every call.
 */
function firstCheck(references: StatementReferences): BatchStep {
  const found: string[] = [];
  const values: string[] = [];
  if (references.relations.length > 0) {
    values.push(textArray(references.relations));
    found.push(`EXISTS (SELECT FROM pg_catalog.pg_rewrite w
   WHERE w.ev_class OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.to_regclass(n.name) FROM pg_catalog.unnest($${values.length}::pg_catalog.text[]) AS n(name)))
     AND w.ev_class OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`);
  }
  if (references.functions.length > 0) {
    values.push(textArray(references.functions));
    found.push(`EXISTS (SELECT FROM pg_catalog.pg_proc p
   WHERE p.proname OPERATOR(pg_catalog.=) ANY ($${values.length}::pg_catalog.name[]) AND p.prosecdef AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`);
  }
  const text = `SELECT CASE WHEN ${found.join('\n  OR ')}
  THEN CAST(pg_catalog.concat('${FURTHER_MARKER}') AS pg_catalog.int4) ELSE 0 END`;
  return { text, values };
}

/** True when a failed resolve step's error message says the statement needs the full walk. */
export function resolvesFurther(message: string): boolean {
  return message.includes(FURTHER_MARKER);
}

/**
 * The full walk: resolves what the statement names as the server itself does: each relation by
 * regclass (so by OID, through the session's search_path), then every relation its views read,
 * views over views included (`:relid` in the stored rewrite rules), down to the server's own
 * views (FIRST_NORMAL_OID); each function called by name, and each function those views call
 * (`:funcid`). The step fails, and the statement never runs, when a relation reaches one the
 * policy refuses by name (pg_authid, pg_stat_activity, an extension's pg_stat_statements, ...;
 * the same set sample_rows refuses), or when the statement or one of those views calls a
 * SECURITY DEFINER function outside the server's own schemas: such a function runs with its
 * owner's rights, which no check of the statement can see into.
 *
 * Index lookups only (pg_rewrite by relation, pg_class and pg_proc by OID, pg_proc by name), in
 * as few joins as the server plans quickly (it is planned on every call); sent in the same round
 * trip as the statement. `OFFSET 0` keeps the finding in its own subquery: pulled up, each of
 * its two uses in the CASE would be planned apart. A view's rules name the view itself (before
 * PostgreSQL 16, as OLD and NEW): that name is not followed, or every view would be read again
 * at each depth down to MAX_VIEW_DEPTH.
 */
function walkStep(references: StatementReferences): BatchStep {
  const text = `WITH RECURSIVE reach(root, kind, oid, depth) AS (
  SELECT r, 'relid' COLLATE "C", r::pg_catalog.oid, 0
    FROM pg_catalog.unnest($1::pg_catalog.text[]) AS n(name) CROSS JOIN LATERAL pg_catalog.to_regclass(n.name) AS r
   WHERE r IS NOT NULL
  UNION
  SELECT r.root, m[1] COLLATE "C", m[2]::pg_catalog.oid, r.depth OPERATOR(pg_catalog.+) 1
    FROM reach r JOIN pg_catalog.pg_rewrite w ON w.ev_class OPERATOR(pg_catalog.=) r.oid
   CROSS JOIN LATERAL pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':(relid|funcid) (\\d+)', 'g') AS m
   WHERE r.kind OPERATOR(pg_catalog.=) 'relid' AND r.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
     AND r.depth OPERATOR(pg_catalog.<) ${MAX_VIEW_DEPTH}
     AND NOT (m[1] OPERATOR(pg_catalog.=) 'relid' AND m[2]::pg_catalog.oid OPERATOR(pg_catalog.=) r.oid)
)
SELECT CASE WHEN what IS NULL THEN 0 ELSE CAST(pg_catalog.concat('${RESOLVE_MARKER}', what) AS pg_catalog.int4) END FROM (SELECT COALESCE(
  (SELECT pg_catalog.concat(r.root, ' reads ', c.relname)
     FROM reach r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'relid' AND c.relname IN (${REFUSED_NAMES})
      AND (c.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
           OR EXISTS (SELECT FROM pg_catalog.pg_depend d
                       WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                         AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'))
    LIMIT 1),
  (SELECT pg_catalog.concat(p.proname, '()') FROM pg_catalog.pg_proc p
    WHERE p.proname OPERATOR(pg_catalog.=) ANY ($2::pg_catalog.name[]) AND p.prosecdef AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND NOT ${HANACTL_CONTEXT}
    LIMIT 1),
  (SELECT pg_catalog.concat(r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'funcid' AND p.prosecdef AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND NOT ${HANACTL_CONTEXT}
    LIMIT 1)) AS what OFFSET 0) AS found`;
  return { text, values: [textArray(references.relations), textArray(references.functions), contextFunctionBody(SCHEMA_MARK)] };
}

/** The refusal a failed resolve step stands for (its error message carries RESOLVE_MARKER), or undefined. */
export function resolveRefusal(message: string): HanactlError | undefined {
  const at = message.indexOf(RESOLVE_MARKER);
  if (at < 0) return undefined;
  const what = message.slice(at + RESOLVE_MARKER.length).replace(/"$/, '');
  const reads = / reads (.+)$/.exec(what);
  if (reads) {
    const target = reads[1] as string;
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${what.slice(0, reads.index)} reads ${target} (through its view definitions), which holds what hanactl does not return on any connection (password hashes, sample values, or other sessions' statements).`,
      {
        rule: 'credential-read',
        hint: "Select from ordinary tables, or from views that do not read the server's own catalogs of roles and sessions.",
      },
    );
  }
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${what} is a SECURITY DEFINER function: it runs with its owner's rights, and what it reads cannot be checked here.`,
    { rule: 'denied-function', hint: 'Select from the tables it reads instead, or ask a person to run it.' },
  );
}
