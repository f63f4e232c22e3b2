import { PG_EXECUTOR_STATISTICS_VIEWS } from '../../policy/pg-functions.generated.js';
import { PG_HANACTL_SECRET_RELATIONS, PG_REFUSED_RELATION_NAMES } from '../../policy/pg-functions.js';
import { contextBarrierCandidate } from './postgres-context-barrier.js';
import { childRelation, loginBypasses, ownerRightsCandidate } from './postgres-owner-rights.js';
import {
  AGE_OF_XID,
  callsDispatcher,
  FIRST_NORMAL_OID,
  handsRelationByName,
  personDefinitions,
  personIndexClass,
  personPolicy,
  textArray,
} from './postgres-reach.js';
import { readsClassFigures } from './postgres-row-figures.js';
import { readsSettingsWholesale } from './postgres-secret-settings.js';

/**
 * When a relation the statement names needs no walk (postgres-reach.ts) at all: the first check's
 * (postgres-resolve.ts) question for relations, asked by index with neither recursion nor a join
 * the planner must order, one level into a view.
 *
 * The walk goes on from a relation created since initdb through its rewrite rules, its children,
 * the types of its columns and its row-level-security policies (personPolicy), and judges foreign
 * tables and relations by name. A relation with
 * none of these is a leaf: the walk finds nothing there. A view (or materialised view) whose rules
 * use only leaves, relations initdb made (which the walk judges by name and never follows), and
 * functions, operators and types initdb made (which the walk does not follow) is settled too: the
 * walk would reach those and stop. Every relation on the way is asked its name against all the
 * names any finding judges (refused, hanactl's keys, the executor's statistics), whoever made it.
 * A view that reads the settings wholesale (pg_settings, pg_show_all_settings(), current_setting()
 * of a name that is not a constant: postgres-secret-settings.ts) is not settled either.
 * A view whose stored tree calls by OID a built-in the policy refuses (builtinObjection, on a
 * read-only connection: the walk then judges with the connection's mode; pg_depend records
 * nothing on what initdb pins) is not settled, nor, where rows are separated,
 * one that calls a statistics function, or one that may read a table under row security with other
 * rights than the caller's (ownerRightsCandidate: a materialized view, or a view that is not
 * security_invoker, over such a table), one that is not security_barrier and reads a setting
 * (contextBarrierCandidate, postgres-context-barrier.ts), nor one that names or reads a partition or inheritance child
 * or a table whose row security does not bind the login (loginBypasses),
 * a sequence, or pg_class's figure columns (postgres-row-figures.ts).
 *
 * A storage (TOAST) table (relkind t) is never plain, whoever made it: the walk refuses it.
 *
 * Anything else (a view over a view, a function, operator or type created since, a relation with
 * children, a foreign table) is left to the walk. A route the walk gains from a relation must be
 * asked here too (leafRelation), or the first check would wave through what the walk refuses.
 */

/**
 * The long name lists the questions below compare names with, each a bound name[] parameter
 * (`$n::pg_catalog.name[]`) that a call of one binds in the step's values when a question first
 * uses it (BoundNames in postgres-resolve.ts): `policy` judgedFunctionNames, `builtins`
 * refusedBuiltinNames, `relations` judgedRelationNames.
 */
export interface NameLists {
  policy(): string;
  builtins(): string;
  relations(): string;
}

let judgedRelations: string | undefined;
/** Every relation name a walk's finding judges, as the value of a bound name[] parameter. */
export function judgedRelationNames(): string {
  judgedRelations ??= textArray([
    ...new Set([
      ...PG_REFUSED_RELATION_NAMES,
      ...PG_HANACTL_SECRET_RELATIONS,
      ...Object.keys(PG_EXECUTOR_STATISTICS_VIEWS),
      // Read wholesale, the settings may hold a secret (postgres-secret-settings.ts).
      'pg_settings',
    ]),
  ]);
  return judgedRelations;
}

/**
 * True when `name` is not judged. array_position rather than NOT IN: the planner estimates a list
 * element by element, which for these names costs more than the lookup itself.
 */
const unjudged = (name: string, lists: NameLists): string => `pg_catalog.array_position(${lists.relations()}, ${name}) IS NULL`;

/**
 * True for a relation (pg_class `a`) the walk reaches and stops at: no rules, not foreign, no children, no index of an operator class made since initdb (personIndexClass), no column of a type created since initdb;
 * with `separated`, not a partition or inheritance child nor a table whose row security does not bind the login (owner-rights), nor a sequence (postgres-row-figures.ts).
 */
function leafRelation(a: string, separated: boolean, lists: NameLists): string {
  return `NOT ${a}.relhasrules AND ${a}.relkind OPERATOR(pg_catalog.<>) 't'${separated ? ` AND ${a}.relkind OPERATOR(pg_catalog.<>) 'S' AND NOT ${childRelation(a)} AND NOT ${loginBypasses(a)}` : ''} AND ${a}.relkind OPERATOR(pg_catalog.<>) 'f' AND NOT ${a}.relhassubclass
        AND NOT (${a}.relhasindex AND ${personIndexClass(`${a}.oid`)}) AND NOT ${personDefinitions(a)}
        AND NOT (${a}.relrowsecurity AND ${personPolicy(`${a}.oid`, lists.policy())})
        AND NOT EXISTS (SELECT FROM pg_catalog.pg_attribute t WHERE t.attrelid OPERATOR(pg_catalog.=) ${a}.oid
                         AND t.attnum OPERATOR(pg_catalog.>) 0 AND t.atttypid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`;
}

/** True when the relation whose OID is `oid` has no judged name and is one initdb made or a leaf. */
function plainRelation(oid: string, separated: boolean, lists: NameLists): string {
  return `EXISTS (SELECT FROM pg_catalog.pg_class x WHERE x.oid OPERATOR(pg_catalog.=) ${oid} AND ${unjudged('x.relname', lists)} AND x.relkind OPERATOR(pg_catalog.<>) 't'
             AND (x.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} OR (${leafRelation('x', separated, lists)})))`;
}

/** Where rows are separated: a rule that reads pg_class's figure columns (postgres-row-figures.ts). */
const FIGURES = `
        OR ${readsClassFigures('w.ev_action::pg_catalog.text')}`;

/**
 * True when the view `a` uses, in each of its rules, only plain relations (plainRelation; from
 * pg_depend and from the stored tree's `:relid`, as the walk takes them) and only functions,
 * operators and types initdb made; no built-in the policy refuses by OID, nor with `separated` a statistics function
 * or pg_class's figures.
 */
function viewReadsPlainly(a: string, separated: boolean, lists: NameLists): string {
  // Where rows are separated, the statistics functions too: the policy's list holds both.
  const names = separated ? lists.policy() : lists.builtins();
  const statistics = `
        OR EXISTS (SELECT FROM pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
                    JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(m[1]))
                   WHERE pg_catalog.array_position(${names}, p.proname) IS NOT NULL${separated ? ` OR p.oid OPERATOR(pg_catalog.=) ${AGE_OF_XID}` : ''})
        OR ${handsRelationByName('w.ev_action::pg_catalog.text')}
        OR ${callsDispatcher('w.ev_action::pg_catalog.text')}
        OR ${readsSettingsWholesale('w.ev_action::pg_catalog.text')}${separated ? FIGURES : ''}`;
  return `${a}.relkind OPERATOR(pg_catalog.=) ANY ('{v,m}'::pg_catalog."char"[]) AND NOT EXISTS (SELECT FROM pg_catalog.pg_rewrite w WHERE w.ev_class OPERATOR(pg_catalog.=) ${a}.oid AND (
        EXISTS (SELECT FROM pg_catalog.pg_depend d
                 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) w.oid
                   AND d.refobjid OPERATOR(pg_catalog.<>) ${a}.oid
                   AND CASE WHEN d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass THEN NOT ${plainRelation('d.refobjid', separated, lists)}
                        WHEN d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass THEN d.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
                        WHEN d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_operator'::pg_catalog.regclass THEN d.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
                        WHEN d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass THEN d.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
                        ELSE false END)
        OR EXISTS (SELECT FROM pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':relid (\\d+)', 'g') AS m
                    WHERE pg_catalog.oidin(pg_catalog.textout(m[1])) OPERATOR(pg_catalog.<>) ${a}.oid AND NOT ${plainRelation('pg_catalog.oidin(pg_catalog.textout(m[1]))', separated, lists)})${statistics}))`;
}

/**
 * True when the relation `a` (pg_class), named by the statement, leaves the walk nothing to find:
 * made by initdb (judged by name before the step is sent), or with no judged name, not foreign, no children, no column of a type created since, and either no rules or a view that
 * reads plainly (viewReadsPlainly).
 */
export function settledRelation(a: string, separated: boolean, lists: NameLists): string {
  return `((${a}.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} AND ${a}.relkind OPERATOR(pg_catalog.<>) 't')
     OR (${unjudged(`${a}.relname`, lists)} AND ${a}.relkind OPERATOR(pg_catalog.<>) 't' AND ${a}.relkind OPERATOR(pg_catalog.<>) 'f' AND NOT ${a}.relhassubclass${separated ? ` AND ${a}.relkind OPERATOR(pg_catalog.<>) 'S' AND NOT ${childRelation(a)} AND NOT ${loginBypasses(a)}` : ''}
         AND NOT (${a}.relhasindex AND ${personIndexClass(`${a}.oid`)}) AND NOT ${personDefinitions(a)}
         AND NOT (${a}.relrowsecurity AND ${personPolicy(`${a}.oid`, lists.policy())})
         AND NOT EXISTS (SELECT FROM pg_catalog.pg_attribute t WHERE t.attrelid OPERATOR(pg_catalog.=) ${a}.oid
                          AND t.attnum OPERATOR(pg_catalog.>) 0 AND t.atttypid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})
         AND (NOT ${a}.relhasrules OR (${viewReadsPlainly(a, separated, lists)}${separated ? ` AND NOT (${ownerRightsCandidate(a)}) AND NOT ${contextBarrierCandidate(a)}` : ''}))))`;
}
