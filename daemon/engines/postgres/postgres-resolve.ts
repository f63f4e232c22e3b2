import { HanactlError } from '../../../shared/errors.js';
import { executorStatisticsObjection } from '../../policy/executor-statistics.js';
import {
  PG_HANACTL_SECRET_RELATIONS,
  PG_REFUSED_RELATION_NAMES,
  PG_STORAGE_NAME,
  storageTableObjection,
} from '../../policy/pg-functions.js';
import type { StatementReferences } from '../../policy/types.js';
import type { BatchStep } from './postgres-batch.js';
import { checkOptionFinding, checkOptionRefusal } from './postgres-check-option.js';
import { contextBarrierFinding, contextBarrierRefusal } from './postgres-context-barrier.js';
import { fkActionFinding, fkActionRefusal } from './postgres-fk-actions.js';
import { foreignTableFinding, foreignTableRefusal } from './postgres-foreign-tables.js';
import { childRelation, loginBypasses, ownerRightsFinding, ownerRightsRefusal } from './postgres-owner-rights.js';
import { policyFirstFinding, policyFirstRefusal } from './postgres-policy-first.js';
import {
  builtinObjection,
  callsDispatcher,
  cascadesTo,
  configFinding,
  FIRST_NORMAL_OID,
  IMPLICIT_CODE,
  isRefusedBuiltin,
  judgedFunctionNames,
  personDefinitions,
  personIndexClass,
  personPolicy,
  reachCte,
  reachFinding,
  reachValues,
  refusedBuiltinFinding,
  refusedBuiltinNames,
  runtimeCodeFinding,
  statisticsFinding,
  textArray,
  writeFires,
  writtenValue,
} from './postgres-reach.js';
import { relationCodeFinding } from './postgres-relation-code.js';
import { conditionFinding, conditionRefusal, conditionsValue, REACHES_HIDDEN_ROWS } from './postgres-row-conditions.js';
import { rowFiguresFinding, rowFiguresRefusal } from './postgres-row-figures.js';
import { settingsFinding, settingsRefusal } from './postgres-secret-settings.js';
import { judgedRelationNames, type NameLists, settledRelation } from './postgres-settled.js';
import { contextFunctionBody } from './postgres-signed-context.js';
import { systemColumnFinding, systemColumnRefusal } from './postgres-system-columns.js';
import { utilityFinding, utilityRefusal } from './postgres-utility-bodies.js';

/** The text a refusing resolve step fails with, before what it found. */
export const RESOLVE_MARKER = 'hanactl: refused reference ';

/** Where the schema goes in the verifying function's body ($6), to compare it with pg_proc.prosrc. */
const SCHEMA_MARK = '@SCHEMA@';

/**
 * hanactl's own verifying function (`hanactl context-sql`): SECURITY DEFINER by design, it returns
 * only this call's own signed context value, and a person's view may use it. Recognised by its
 * exact body in its own schema (context-sql writes it after a line break, which the server keeps
 * in prosrc: white space around it is trimmed on both sides), so a function of that name with any
 * other body is not exempt.
 */
const HANACTL_CONTEXT = `(p.proname OPERATOR(pg_catalog.=) 'context' AND pg_catalog.btrim(pg_catalog.lower(p.prosrc), E' \\n\\r\\t') OPERATOR(pg_catalog.=) pg_catalog.btrim(pg_catalog.lower(pg_catalog.replace($6::pg_catalog.text, '${SCHEMA_MARK}', (SELECT ns.nspname::pg_catalog.text FROM pg_catalog.pg_namespace ns WHERE ns.oid OPERATOR(pg_catalog.=) p.pronamespace))), E' \\n\\r\\t'))`;

/** The text a first check fails with when what the statement names needs the full walk (resolveStep). */
export const FURTHER_MARKER = 'hanactl: resolve further';

const REFUSED_SET: ReadonlySet<string> = new Set([...PG_REFUSED_RELATION_NAMES, ...PG_HANACTL_SECRET_RELATIONS]);

/** The last part of a name as regclass text (`"schema"."name"`, each part quoted), as pg_class.relname holds it. */
function relationName(qualified: string): string {
  const last = /"((?:[^"]|"")*)"$/.exec(qualified);
  return last ? (last[1] as string).replaceAll('""', '"') : qualified;
}

/**
 * How far a call's resolve step goes: `first`, a check that costs the server a fraction of the
 * walk; `view`, the same check one level into the views it names (postgres-settled.ts), which
 * costs more to plan; `walk`, the full walk. Each of the first two fails with FURTHER_MARKER
 * whenever the walk could find anything, and the call is then made again at the next stage.
 */
export type ResolveStage = 'first' | 'view' | 'walk';

/** The stage after `stage` for `references`: the view stage only where it asks other questions than the first check (looksIntoViews). */
export function nextStage(stage: ResolveStage, references: StatementReferences): ResolveStage {
  return stage === 'first' && looksIntoViews(references) ? 'view' : 'walk';
}

/** True when the view stage looks into views for `references`: they name relations, and write none (a write through a view fires what its base tables' writes fire). */
function looksIntoViews(references: StatementReferences): boolean {
  return references.relations.length > 0 && (references.written?.length ?? 0) === 0;
}

/**
 * The step that resolves, in the call's transaction and before the statement runs, what the
 * statement names (undefined when it names nothing), at `stage`: the full walk (walkStep), or a
 * check (firstCheck) that fails with FURTHER_MARKER whenever the walk could find anything. A root
 * named as a refused relation goes to the walk at once. `writes`: the call's transaction is not
 * read-only (by default, when the statement writes a relation by name).
 */
export function resolveStep(
  references: StatementReferences | undefined,
  stage: ResolveStage,
  writes = (references?.written?.length ?? 0) > 0,
): BatchStep | undefined {
  if (!references || !namesAnything(references)) return undefined;
  const refusedRoot = (relation: string): boolean => {
    const name = relationName(relation);
    return REFUSED_SET.has(name) || PG_STORAGE_NAME.test(name) || name === 'pg_settings';
  };
  // A wholesale read of settings is judged by the walk, which asks whether a secret setting is held (postgres-secret-settings.ts).
  if (stage === 'walk' || references.settings !== undefined || references.relations.some(refusedRoot)) return walkStep(references, writes);
  return firstCheck(references, stage === 'view' && looksIntoViews(references));
}

function namesAnything(references: StatementReferences): boolean {
  return (
    references.settings !== undefined ||
    [references.relations, references.functions, references.operators, references.types, references.attributes].some(
      (names) => (names?.length ?? 0) > 0,
    )
  );
}

/**
 * What the full walk (walkStep) could find, asked directly of each catalog by index, with neither
 * recursion nor joins, so that the server plans it in a fraction of the time: is a named object
 * one the walk starts from or goes on from (routeConditions)? The step fails with FURTHER_MARKER
 * if so. When it does not, the walk would find nothing: it follows only objects created since
 * initdb, and the roots' own names are judged before the step is sent (resolveStep). `concat` is
 * STABLE, so the planner does not fold the failing cast into a failure of every call.
 */
function firstCheck(references: StatementReferences, intoViews: boolean): BatchStep {
  const values: string[] = [];
  const found = routeConditions(references, values, intoViews);
  const text = `SELECT CASE WHEN ${found.join('\n  OR ')}
  THEN pg_catalog.int4in(pg_catalog.textout(pg_catalog.concat('${FURTHER_MARKER}'))) ELSE 0 END`;
  return { text, values };
}

/** True when a failed resolve step's error message says the statement needs the full walk. */
export function resolvesFurther(message: string): boolean {
  return message.includes(FURTHER_MARKER);
}

/** A relation the walk goes on from, unless it is a view that reads plainly (settledRelation, asked at the `view` stage). */
const leafRoot = (
  lists: NameLists,
): string => `(c.relhasrules OR c.relkind OPERATOR(pg_catalog.=) ANY ('{f,t}'::pg_catalog."char"[]) OR c.relhassubclass OR c.relname OPERATOR(pg_catalog.=) ANY ('{${PG_HANACTL_SECRET_RELATIONS.join(',')}}'::pg_catalog.name[])
          OR (c.relhasindex AND ${personIndexClass('c.oid')}) OR ${personDefinitions('c')}
          OR (c.relrowsecurity AND ${personPolicy('c.oid', lists.policy())})
          OR EXISTS (SELECT FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attnum OPERATOR(pg_catalog.>) 0
                      AND a.atttypid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}))`;

/**
 * The policy's long name lists (NameLists), each bound in `values` as one name[] parameter the
 * first time a question uses it, and only then: a parameter the text does not use fails the step.
 */
function boundNames(values: string[]): NameLists {
  const slots = new Map<string, string>();
  const slot = (value: () => string) => (): string => {
    const list = value();
    let parameter = slots.get(list);
    if (parameter === undefined) {
      values.push(list);
      parameter = `$${values.length}::pg_catalog.name[]`;
      slots.set(list, parameter);
    }
    return parameter;
  };
  // The read-only list of refused built-ins holds the writable one: these questions only decide whether the walk runs.
  return { policy: slot(judgedFunctionNames), builtins: slot(() => refusedBuiltinNames(true)), relations: slot(judgedRelationNames) };
}

/**
 * The first check's questions, each asked of one catalog by index and each mirroring where the
 * walk (postgres-reach.ts) starts or goes on from a named object: a named relation created since
 * initdb that has rewrite rules (a view, a materialised view, a table with rules: relhasrules,
 * which the server itself reads before it looks for any, and sets with the first), is a foreign
 * table, has children, is hanactl's key table or has a column of a type created since (where
 * rows are separated, also one that is a partition or inheritance child or a table whose row
 * security does not bind the login, owner-rights, or a sequence, postgres-row-figures.ts; with
 * `intoViews`, one that is not settled: postgres-settled.ts, where a view over plain tables and
 * built-ins only is); a written relation created since whose triggers, defaults, constraints or
 * indexes use a function, operator or type created since, whose defaults, CHECK constraints or
 * trigger conditions call a type-dispatching function (array_in with a domain's OID as a number,
 * which pg_depend does not record: callsDispatcher), or whose foreign keys' actions write to
 * another table; a function
 * of a named name (or a name after a dot) created since, whatever its kind or language (the walk
 * follows what each one records, its argument types and through a domain's CHECK any function,
 * and only the walk tells hanactl's own context() apart); an operator or a type of a named name
 * created since, or a cast to a named type through a function created since. A named relation
 * with an index of an operator class made since initdb goes to the walk too (personIndexClass),
 * and so does every statement of a database that holds a person's cast between built-in types,
 * default sort or hash class for one, member of a built-in family, or operator a built-in one
 * names as its negator or commutator (IMPLICIT_CODE), which the server calls without their names.
 */
function routeConditions(references: StatementReferences, values: string[], intoViews: boolean): string[] {
  const out: string[] = [IMPLICIT_CODE];
  const bind = (items: readonly string[] | undefined): string => {
    values.push(textArray(items));
    return `$${values.length}`;
  };
  // A call in a condition that may tell hidden rows apart: the walk judges it with what the statement reaches.
  if (references.separated && (references.conditions?.length ?? 0) > 0) {
    values.push(conditionsValue(references));
    out.push(`${conditionFinding(`$${values.length}`)} IS NOT NULL`);
  }
  if (references.relations.length > 0) {
    const roots = bind(references.relations);
    const lists = boundNames(values);
    const question = intoViews
      ? `NOT ${settledRelation('c', references.separated === true, lists)}`
      : references.separated
        ? `(${leafRoot(lists)} OR c.relkind OPERATOR(pg_catalog.=) 'S' OR ${childRelation('c')} OR ${loginBypasses('c')})`
        : leafRoot(lists);
    out.push(`EXISTS (SELECT FROM pg_catalog.pg_class c
   WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.to_regclass(n.name)::pg_catalog.oid FROM pg_catalog.unnest(${roots}::pg_catalog.text[]) AS n(name)))
     AND c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
     AND ${question})`);
  }
  if ((references.written?.length ?? 0) > 0) {
    out.push(`EXISTS (SELECT FROM pg_catalog.pg_class c
   WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.to_regclass(n.name)::pg_catalog.oid FROM pg_catalog.unnest(${bind(references.written)}::pg_catalog.text[]) AS n(name)))
     AND c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
     AND (EXISTS (SELECT FROM (${writeFires('c.oid')}) AS o JOIN pg_catalog.pg_depend d
                   ON d.classid OPERATOR(pg_catalog.=) o.classid AND d.objid OPERATOR(pg_catalog.=) o.oid
                  WHERE d.refclassid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.pg_proc'::pg_catalog.regclass, 'pg_catalog.pg_operator'::pg_catalog.regclass, 'pg_catalog.pg_type'::pg_catalog.regclass]::pg_catalog.oid[])
                    AND d.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})
          OR EXISTS (SELECT FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_constraint k ON k.oid OPERATOR(pg_catalog.=) d.objid
                      WHERE ${cascadesTo('c.oid')})
          OR EXISTS (SELECT FROM pg_catalog.pg_attrdef a WHERE a.adrelid OPERATOR(pg_catalog.=) c.oid AND ${callsDispatcher('a.adbin::pg_catalog.text')})
          OR EXISTS (SELECT FROM pg_catalog.pg_constraint k WHERE k.conrelid OPERATOR(pg_catalog.=) c.oid AND k.conbin IS NOT NULL
                        AND ${callsDispatcher('k.conbin::pg_catalog.text')})
          OR EXISTS (SELECT FROM pg_catalog.pg_trigger g WHERE g.tgrelid OPERATOR(pg_catalog.=) c.oid AND g.tgqual IS NOT NULL
                        AND ${callsDispatcher('g.tgqual::pg_catalog.text')})))`);
  }
  const named = [...references.functions, ...(references.attributes ?? [])];
  if (named.length > 0) {
    out.push(`EXISTS (SELECT FROM pg_catalog.pg_proc p
   WHERE p.proname OPERATOR(pg_catalog.=) ANY (${bind(named)}::pg_catalog.name[]) AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`);
  }
  // A name after a dot that attribute notation would call as a refused built-in: the walk judges it (refusedBuiltinFinding).
  const attributes = (references.attributes ?? []).filter((name) => isRefusedBuiltin(name, references.readOnly === true));
  if (attributes.length > 0) {
    out.push(`EXISTS (SELECT FROM pg_catalog.pg_proc p
   WHERE p.proname OPERATOR(pg_catalog.=) ANY (${bind(attributes)}::pg_catalog.name[]))`);
  }
  if ((references.operators?.length ?? 0) > 0) {
    out.push(`EXISTS (SELECT FROM pg_catalog.pg_operator o
   WHERE o.oprname OPERATOR(pg_catalog.=) ANY (${bind(references.operators)}::pg_catalog.name[]) AND o.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`);
  }
  if ((references.types?.length ?? 0) > 0) {
    const types = bind(references.types);
    out.push(`EXISTS (SELECT FROM pg_catalog.pg_type t
   WHERE t.typname OPERATOR(pg_catalog.=) ANY (${types}::pg_catalog.name[])
     AND (t.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
          OR EXISTS (SELECT FROM pg_catalog.pg_cast k JOIN pg_catalog.pg_type f ON f.oid OPERATOR(pg_catalog.=) k.castsource
                      WHERE k.casttarget OPERATOR(pg_catalog.=) t.oid AND k.castfunc OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
                        AND f.typname OPERATOR(pg_catalog.=) ANY (${types}::pg_catalog.name[]))))`);
  }
  return out;
}

/**
 * The full walk: resolves what the statement names as the server itself does (each relation by
 * regclass, so by OID through the session's search_path; functions, operators and types by name,
 * every overload) and follows each to what it uses when it runs, as the server recorded it
 * (postgres-reach.ts). The step fails, and the statement never runs, when what it reaches is a
 * relation the policy refuses by name (pg_authid, pg_stat_activity, an extension's
 * pg_stat_statements, hanactl's key table, ...; the same set sample_rows refuses), directly,
 * through a view, a function's body or a foreign table's remote name; a foreign table of a wrapper
 * whose remote end cannot be judged; or a SECURITY DEFINER function created since initdb: such a
 * function runs with its owner's rights, which no check of the statement can see into.
 *
 * Index lookups for all but the words of a function's text body, planned on every call; sent in
 * the same round trip as the statement. `OFFSET 0` keeps the finding in its own subquery: pulled
 * up, each of its two uses in the CASE would be planned apart.
 */
function walkStep(references: StatementReferences, writes: boolean): BatchStep {
  const text = `WITH RECURSIVE ${reachCte(writes, references.separated !== true)}
SELECT CASE WHEN what IS NULL THEN 0 ELSE pg_catalog.int4in(pg_catalog.textout(pg_catalog.concat('${RESOLVE_MARKER}', what))) END
  FROM (SELECT ${findings(references, writes)} AS what OFFSET 0) AS found`;
  return {
    text,
    values: walkValues(references),
  };
}

/**
 * The walk's bound values: what the statement names, hanactl's own function body, whether it
 * writes, the refused built-ins for the connection's mode ($8); where rows are separated, the
 * calls in its conditions on no column of the row ($9, postgres-row-conditions.ts), and the
 * relations it inserts into ($10) and updates ($11: postgres-check-option.ts), and deletes from
 * ($12: postgres-fk-actions.ts).
 */
function walkValues(references: StatementReferences): BatchStep['values'] {
  return [
    ...reachValues(references),
    contextFunctionBody(SCHEMA_MARK),
    writtenValue(references),
    refusedBuiltinNames(references.readOnly === true),
    ...(references.separated
      ? [conditionsValue(references), textArray(references.inserts), textArray(references.updates), textArray(references.deletes)]
      : []),
  ];
}

/**
 * What the walk judges: on every connection, refused relations, SECURITY DEFINER functions,
 * foreign tables it cannot judge, refused built-ins (with the connection's mode: the list bound
 * as $8) and functions whose code it cannot judge
 * before they run (runtimeCodeFinding), utility statements in function bodies (with the
 * connection's mode: postgres-utility-bodies.ts); on a read-only connection and where rows are
 * separated, every foreign table (postgres-foreign-tables.ts); where rows are separated also the executor's statistics
 * and relations that read a table under row security with their owner's rights
 * (postgres-owner-rights.ts), sequences and views over pg_class's figures (postgres-row-figures.ts),
 * views and inlinable functions that filter by context values without a barrier
 * (postgres-context-barrier.ts), writes through views that filter rows without a check option
 * (postgres-check-option.ts), deletes and updates a foreign key's action carries into another
 * table, by the statement or by the code it reaches, and TRUNCATE in that code (with `writes`,
 * the call's transaction may write: postgres-fk-actions.ts), and calls in the statement's conditions that may run on hidden
 * rows and tell them apart (postgres-row-conditions.ts).
 */
function findings(references: StatementReferences, writes: boolean): string {
  const utility = utilityFinding(references.readOnly === true);
  // Last: a finding that says more of the same table (owner-rights, credential-read) comes first.
  const foreign = references.readOnly || references.separated ? `, ${foreignTableFinding(references.separated === true)}` : '';
  const settings = settingsFinding(references.settings);
  return references.separated
    ? `COALESCE(${reachFinding(HANACTL_CONTEXT)}, ${settings}, ${refusedBuiltinFinding()}, ${runtimeCodeFinding()}, ${utility}, ${relationCodeFinding()}, ${configFinding()}, ${policyFirstFinding()}, ${statisticsFinding()}, ${systemColumnFinding()}, ${ownerRightsFinding()}, ${rowFiguresFinding()}, ${contextBarrierFinding()}, ${checkOptionFinding()}, ${fkActionFinding(writes)}, ${conditionFinding('$9', REACHES_HIDDEN_ROWS)}${foreign})`
    : `COALESCE(${reachFinding(HANACTL_CONTEXT)}, ${settings}, ${refusedBuiltinFinding()}, ${runtimeCodeFinding()}, ${utility}, ${relationCodeFinding()}, ${configFinding()}${foreign})`;
}

/**
 * What the walk finds for `references`, as one row whose `what` is the finding (resolveRefusal
 * reads it after RESOLVE_MARKER) or NULL: for sample_rows, which reads a relation by name.
 */
export function walkFinding(references: StatementReferences): BatchStep {
  const writes = (references.written?.length ?? 0) > 0;
  const text = `WITH RECURSIVE ${reachCte(writes, references.separated !== true)}
SELECT what FROM (SELECT ${findings(references, writes)} AS what OFFSET 0) AS found`;
  return {
    text,
    values: walkValues(references),
  };
}

/** The refusal a failed resolve step stands for (its error message carries RESOLVE_MARKER), or undefined. */
export function resolveRefusal(message: string): HanactlError | undefined {
  const at = message.indexOf(RESOLVE_MARKER);
  if (at < 0) return undefined;
  const found = message.slice(at + RESOLVE_MARKER.length).replace(/"$/, '');
  const kind = found.slice(0, 1);
  // `L <language> <root> calls <name>()`: the language first, one word.
  const language = kind === 'L' ? found.slice(2).split(' ', 1)[0] : undefined;
  const what = language ? found.slice(3 + language.length) : found.slice(2);
  const verb = / (reads|calls) ([^ ]+)$/.exec(what);
  const root = verb ? what.slice(0, verb.index) : what;
  const target = verb ? (verb[2] as string) : '';
  if (kind === 'R' && PG_HANACTL_SECRET_RELATIONS.includes(target.toLowerCase())) {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${root} reads ${target} (through the objects it uses), which holds hanactl's context signing keys; hanactl does not return them on any connection.`,
      { rule: 'credential-read', hint: 'Read context values with the verifying function (hanactl.context(name)) instead.' },
    );
  }
  if (kind === 'E') {
    // `E <root> reads <pg_toast_N> of <owner>`: the storage table's name has no space.
    const storage = / reads ([^ ]+) of (.*)$/.exec(what);
    const from = storage ? what.slice(0, storage.index) : what;
    const table = storage ? (storage[1] as string) : 'a storage table';
    const owner = storage?.[2] || undefined;
    const refusal = storageTableObjection(from === table || from.endsWith(`.${table}`) ? from : `${from} reads ${table}, which`, owner);
    return new HanactlError('STATEMENT_REFUSED', refusal.message, { rule: refusal.rule, hint: refusal.hint });
  }
  if (kind === 'R') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${root} reads ${target} (through the objects it uses: views, functions, operators, casts, foreign tables, child tables, and what a write fires: rules, triggers, defaults, constraints), which holds what hanactl does not return on any connection (password hashes, sample values, or other sessions' statements).`,
      {
        rule: 'credential-read',
        hint: "Select from ordinary tables, or from views and functions that do not read the server's own catalogs of roles and sessions.",
      },
    );
  }
  if (kind === 'A') return settingsRefusal(what);
  if (kind === 'W') {
    const refusal = foreignTableRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'M') {
    const refusal = utilityRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'P') {
    const refusal = policyFirstRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'O') {
    const refusal = ownerRightsRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'K') {
    const refusal = conditionRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'V') {
    const refusal = contextBarrierRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'G') {
    const refusal = checkOptionRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'I') return fkActionRefusal(what);
  if (kind === 'N') {
    const refusal = rowFiguresRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'Y') {
    const refusal = systemColumnRefusal(what);
    if (refusal) return refusal;
  }
  if (kind === 'S') {
    const refusal = executorStatisticsObjection(`${root} (through ${target}, in the objects it uses)`);
    return new HanactlError('STATEMENT_REFUSED', refusal.message, { rule: refusal.rule, hint: refusal.hint });
  }
  if (kind === 'B') {
    const name = target.replace(/\(\)$/, '');
    // Refused on every connection, else on read-only ones only (the walk judged with the connection's mode).
    const always = builtinObjection(name);
    const inner = always ?? builtinObjection(name, false);
    const why = inner ? inner.message.replace(/^Refused: /, '') : `${name}() is refused on this connection.`;
    if (root === `.${name}`) {
      return new HanactlError(
        'STATEMENT_REFUSED',
        `Refused: PostgreSQL reads .${name} after a value or a table's name as the call ${name}(value) where no column has that name (attribute notation), and ${why}`,
        { rule: inner?.rule ?? 'denied-function', hint: inner?.hint ?? `Remove .${name}.` },
      );
    }
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${root} calls ${name}() through the objects it uses (views, functions, operators, casts, what a write fires), and hanactl does not run it for an agent ${always || !inner ? 'on any connection' : 'on a read-only connection'}: ${why}`,
      { rule: inner?.rule ?? 'denied-function', hint: inner?.hint ?? `Ask a person to run what needs ${name}() in a database client.` },
    );
  }
  if (kind === 'Q') {
    const through = root === target || root === `${target.replace(/\(\)$/, '')}()` ? target : `${root} calls ${target}, which`;
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through} hands table_to_xml (or its family) a relation chosen only when it runs (a parameter, a variable, a column's value or an expression rather than a constant name), so it runs text this statement does not show, which hanactl cannot check before it runs.`,
      {
        rule: 'dynamic-sql',
        hint: "Call table_to_xml('schema.table', ...) with the table's name as one plain string literal, or select from the table directly.",
      },
    );
  }
  if (kind === 'H') {
    const name = target.replace(/\(\)$/, '');
    const through = root === target || root === `${name}()` ? target : `${root} calls ${target}, which`;
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through} hands a built-in that runs a relation's own code (satisfies_hash_partition, bt_index_check, gin_clean_pending_list, brin_summarize_*: operator classes' functions, index expressions, a partition key) a relation chosen only when it runs (a column, a variable, a number or an expression rather than a constant name), so what runs cannot be checked before it runs.`,
      {
        rule: 'dynamic-sql',
        hint: "Ask a person to name the relation as a constant ('schema.table'::regclass) in the view or function, or to run it in a database client.",
      },
    );
  }
  if (kind === 'U') {
    const why =
      "writes a name or string with Unicode escapes (U&\"...\" or U&'...') that hanactl cannot read as PostgreSQL does (an escape character given other than as UESCAPE 'c', an escape that stands for no character, or text around it read otherwise), so what it reads cannot be checked";
    return new HanactlError(
      'STATEMENT_REFUSED',
      root === target ? `Refused: ${target} ${why}.` : `Refused: ${root} calls ${target}, whose body ${why}.`,
      {
        rule: 'opaque-function',
        hint: "Ask a person to write the body's names plainly (or with UESCAPE 'c' and valid escapes), or to run the function in a database client.",
      },
    );
  }
  if (kind === 'K') {
    const why =
      'sets the role, the session authorization or a context value in its body (SET ROLE, SET SESSION AUTHORIZATION, SET mcp.*), so what it reads would run with other rights or scope than the call';
    return new HanactlError(
      'STATEMENT_REFUSED',
      root === target ? `Refused: ${target} ${why}.` : `Refused: ${root} calls ${target}, which ${why}.`,
      {
        rule: 'session-change',
        hint: 'Write the statement the function would run directly, or ask a person to run the function in a database client.',
      },
    );
  }
  if (kind === 'T') {
    // `T <dispatcher> <root> calls <target>`: the dispatcher first, one word.
    const dispatcher = found.slice(2).split(' ', 1)[0] as string;
    const rest = found.slice(3 + dispatcher.length);
    const via = / calls ([^ ]+)$/.exec(rest);
    const from = via ? rest.slice(0, via.index) : rest;
    const object = via ? (via[1] as string) : rest;
    const through = from === object || from === `${object.replace(/\(\)$/, '')}()` ? object : `${from} calls ${object}, which`;
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${through} hands ${dispatcher}() a type chosen only when it runs (a parameter, a variable, a column's value or an expression rather than a constant) or a type created since installation given by its number, so it runs that type's own code (its input function, a domain's CHECK constraints, a range's canonical function), which hanactl cannot check before it runs.`,
      {
        rule: 'dynamic-sql',
        hint: "Cast the text to the type instead ('{1,2}'::schema.type[]), which names it so that its code is checked, or give the type as a constant.",
      },
    );
  }
  if (kind === 'X' || kind === 'L') {
    const direct = root === target;
    const why =
      kind === 'X'
        ? 'SQL text its body chooses when it runs (PL/pgSQL EXECUTE, a prepared statement, a DO block), which hanactl cannot check before it runs'
        : `code in ${language}, which hanactl cannot read to check what it runs`;
    const message =
      kind === 'X'
        ? direct
          ? `Refused: ${target} runs ${why}.`
          : `Refused: ${root} calls ${target}, whose body runs ${why}.`
        : direct
          ? `Refused: ${target} is written in ${language}, which hanactl cannot read to check what it runs.`
          : `Refused: ${root} calls ${target}, written in ${language}, which hanactl cannot read to check what it runs.`;
    return new HanactlError('STATEMENT_REFUSED', message, {
      rule: kind === 'X' ? 'dynamic-sql' : 'opaque-function',
      hint: 'Write the statement the function would run directly, or ask a person to run the function in a database client.',
    });
  }
  if (kind === 'C') {
    const setting = found.slice(2).split(' ', 1)[0] as string;
    const called = found.slice(3 + setting.length);
    const via = / calls ([^ ]+)$/.exec(called);
    const from = via ? called.slice(0, via.index) : called;
    const fn = via ? (via[1] as string) : called;
    const why = `sets ${setting} when it runs (a SET clause in its definition), so it runs with other rights or settings than the call, which hanactl does not judge`;
    return new HanactlError('STATEMENT_REFUSED', from === fn ? `Refused: ${fn} ${why}.` : `Refused: ${from} calls ${fn}, which ${why}.`, {
      rule: setting === 'role' || setting === 'session_authorization' ? 'denied-function' : 'session-change',
      hint: 'Write the statement the function would run directly, or ask a person to run the function in a database client.',
    });
  }
  if (kind === 'F') {
    return new HanactlError(
      'STATEMENT_REFUSED',
      `Refused: ${root} reads the foreign table ${target}, whose remote end hanactl cannot judge (only postgres_fdw tables, by their remote names, are checked).`,
      { rule: 'credential-read', hint: 'Ask a person to read it in a database client, or select from ordinary tables.' },
    );
  }
  const direct = root === `${target.replace(/\(\)$/, '')}()`;
  return new HanactlError(
    'STATEMENT_REFUSED',
    direct
      ? `Refused: ${target} is a SECURITY DEFINER function: it runs with its owner's rights, and what it reads cannot be checked here.`
      : `Refused: ${root} calls ${target}, a SECURITY DEFINER function: it runs with its owner's rights, and what it reads cannot be checked here.`,
    { rule: 'denied-function', hint: 'Select from the tables it reads instead, or ask a person to run it.' },
  );
}
