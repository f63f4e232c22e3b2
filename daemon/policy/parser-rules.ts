import { capQuoted, isWhitespace, trimEndWhere } from '../../shared/linear-text.js';
import { contextCodeObjection, contextDdlObjection } from './context-code.js';
import { deniedFunctionName } from './denied-functions.js';
import { sqlArgumentObjection } from './embedded-sql.js';
import { pgStatisticsFunctionObjection, pgStatisticsRelationObjection, transactionAgeObjection } from './executor-statistics.js';
import { functionReferenceObjection, postgresReferencedFunction } from './function-references.js';
import { separatedNamedRelationObjection } from './named-relations.js';
import { categoryObjection, contextSettingObjection, isContextSetting, objection } from './objections.js';
import {
  deniedRelationObjection,
  namedRelationObjection,
  pgAttributeFunctionObjection,
  pgFunctionObjection,
  relationArgumentPositions,
  sqlArgumentPositions,
} from './pg-functions.js';
import { MAX_PARSE_TREE_CHARS, megabytes, type ParsedCall, parsePostgres } from './pg-parser.js';
import { catalogFiguresRule, plannerFiguresObjection } from './planner-figures.js';
import { relationCodeObjection, relationCodePositions } from './relation-code.js';
import { roleStateObjection } from './role-state.js';
import { sharedSchemaObjection } from './shared-schema.js';
import { PG_COORDINATE_COLUMNS, systemColumnNameObjection, systemColumnObjection } from './system-columns.js';
import { dispatchedTypeNames, typeCodeObjection } from './type-dispatch.js';
import type { Objection, PolicyOptions, StatementReferences, Verdict } from './types.js';

const DISAGREE_HINT = 'Write the statement plainly, without unusual quoting or comments, and send it again.';

/**
 * The second, independent check on PostgreSQL: the text as PostgreSQL's own parser reads it.
 * Runs after the token rules passed (`kind` is their answer). Refuses when the parser sees other
 * statement boundaries or a non-read where the token rules saw a read, and runs every function
 * call anywhere in the tree through the same function rules, and every name after a dot too
 * (attribute notation, `(x).f` is f(x): attribute-calls.ts); SQL text handed to a function is
 * checked whole by `embedded`. Text the grammar rejects is refused: the parser (libpg-query, the
 * grammar of PostgreSQL 17) is not the server's own, whatever its version, so text only the server
 * reads would otherwise be vouched for by the token rules alone. Never throws.
 */
export function postgresParserObjection(
  sql: string,
  options: PolicyOptions,
  kind: 'read' | 'write',
  embedded: (sql: string) => Verdict,
  found?: (references: StatementReferences) => void,
): Objection | undefined {
  if (sql.includes('\u0000')) {
    // The parser stops at a NUL, and PostgreSQL's protocol cannot carry one in a statement at all.
    return objection(
      'nul-character',
      'Refused: the text holds a NUL character, which PostgreSQL does not accept anywhere in a statement.',
      'Remove it and send the statement again.',
    );
  }
  const parsed = parsePostgres(sql);
  if (!parsed.ok) {
    if (parsed.failure === 'restarting') {
      return objection(
        'check-unavailable',
        "Refused: PostgreSQL's parser is restarting after a statement too complex for it, so this statement could not be checked.",
        'Send it again in a moment.',
      );
    }
    if (parsed.failure === 'too-large') {
      return objection(
        'too-complex',
        `Refused: the statement is too complex to check (PostgreSQL's parser makes a tree of ${parsed.message} of it, over the ${megabytes(MAX_PARSE_TREE_CHARS)} this check reads; an INSERT of 3,000 rows of four values makes about 1.1 MB).`,
        'Split it into smaller statements (fewer rows or columns each) and send each on its own.',
      );
    }
    if (parsed.failure === 'broken' || /memory exhausted|stack depth/i.test(parsed.message)) {
      return objection(
        'too-complex',
        "Refused: the statement is too complex to check (PostgreSQL's parser ran out of room).",
        'Split it into simpler statements and send each on its own.',
      );
    }
    // The server's grammar may read what this one rejects (system_user is reserved since 16), so
    // text this check cannot read is not run: otherwise the token rules alone would vouch for it.
    // The message quotes the statement, so it is trimmed by a linear scan and cut short.
    const reason = capQuoted(trimEndWhere(parsed.message, (ch) => ch === '.' || isWhitespace(ch)));
    return objection(
      'parser-rejects',
      `Refused: PostgreSQL's parser could not read this statement: ${reason}.`,
      'Write it in standard PostgreSQL syntax (quote identifiers that are keywords, such as "system_user") and send it again.',
    );
  }
  const [statement, ...more] = parsed.statements;
  if (!statement || more.length > 0) {
    return objection(
      'checks-disagree',
      `Refused: PostgreSQL's parser reads ${parsed.statements.length} statements in the text where the first check reads one; text the two checks read differently is not run.`,
      DISAGREE_HINT,
    );
  }
  const setting = parsed.settings.find(isContextSetting);
  if (setting) return contextSettingObjection(setting);
  if (parsed.updated.includes('pg_settings')) return categoryObjection('session-change', 'UPDATE pg_settings');
  const code = parsed.code[0];
  // PostgreSQL's context values can be signed (`hanactl set --signed-context`), so the refusals say so.
  if (options.allowWrite && options.unsignedContext && code) return contextCodeObjection(code, true);
  if (options.allowWrite && options.unsignedContext && statement.notAllowed) return contextDdlObjection(statement.notAllowed, true);
  if ((options.rowSeparation || options.sharedLogin) && options.allowWrite && statement.roleState)
    return roleStateObjection(statement.roleState);
  if (options.rowSeparation && statement.kind === 'ExplainStmt') return plannerFiguresObjection('EXPLAIN');
  if (options.rowSeparation) {
    const figures =
      catalogFiguresRule(parsed) ??
      transactionAgeObjection(
        parsed.calls.map((call) => call.name),
        [...parsed.columns, ...parsed.types, ...parsed.attributes, ...parsed.calls.map((call) => call.name)],
      );
    if (figures) return figures;
    const coordinates = systemColumnsObjection(parsed);
    if (coordinates) return coordinates;
    if (parsed.opaqueCondition) return opaqueConditionObjection(parsed.opaqueCondition);
  }
  // What SQL text handed to functions names, resolved with the statement's own (query_to_xml runs it in the same session).
  const inner: StatementReferences[] = [];
  const embeddedCollecting = (text: string): Verdict => {
    const verdict = embedded(text);
    if (verdict.ok && verdict.references) inner.push(verdict.references);
    return verdict;
  };
  for (const name of parsed.references) {
    const refused = functionReferenceObjection(name, postgresReferencedFunction, options.allowWrite);
    if (refused) return refused;
  }
  for (const relation of parsed.relations) {
    const denied = deniedRelationObjection(relation) ?? (options.rowSeparation ? pgStatisticsRelationObjection(relation) : undefined);
    if (denied) return denied;
  }
  for (const call of parsed.calls) {
    if (call.name === 'set_config') return categoryObjection('session-change', 'set_config()');
    const denied =
      deniedFunctionName(call.name, options.allowWrite) ??
      pgFunctionObjection(call.name, options.allowWrite) ??
      (options.rowSeparation ? pgStatisticsFunctionObjection(call.name) : undefined);
    if (denied) return denied;
    for (const position of sqlArgumentPositions(call.name, call.argCount) ?? []) {
      const refused = sqlArgumentObjection(call.name, call.stringArgs[position], call.numberArgs[position] === true, embeddedCollecting);
      if (refused) return refused;
    }
    const argument = (position: number): string | undefined => call.stringArgs[position];
    const named =
      namedRelationObjection(call.name, call.argCount, argument) ??
      (options.rowSeparation ? separatedNamedRelationObjection(call.name, call.argCount, argument) : undefined);
    if (named) return named;
    for (const position of relationCodePositions(call.name) ?? []) {
      if (position >= call.argCount) continue;
      const refused = relationCodeObjection(call.name, call.relationArgs[position]);
      if (refused) return refused;
    }
    const typeCode = typeCodeObjection(call);
    if (typeCode) return typeCode;
  }
  // A name after a dot (ColumnRef fields past the first, A_Indirection fields) is a call where no column has that name.
  for (const attribute of parsed.attributes) {
    const refused = pgAttributeFunctionObjection(attribute.toLowerCase(), options.allowWrite, options.rowSeparation === true);
    if (refused) return refused;
  }
  // Last of the refusals, so that the more specific ones above keep their names.
  if ((options.rowSeparation || options.sharedLogin) && options.allowWrite && statement.schemaChange)
    return sharedSchemaObjection(statement.schemaChange, options.sharedLogin === true);
  if (kind === 'read' && !statement.read) {
    return objection(
      'checks-disagree',
      `Refused: the first check reads a read here, but PostgreSQL's parser reads a ${statement.kind} that is not one; text the two checks read differently is not run.`,
      DISAGREE_HINT,
    );
  }
  if (found) {
    // table_to_xml('v', ...): the relation a literal names, read as the server's regclass input reads it.
    const named = parsed.calls.flatMap((call) =>
      (relationArgumentPositions(call.name, call.argCount) ?? []).flatMap((position) => call.stringArgs[position] ?? []),
    );
    // bt_index_check('i'), satisfies_hash_partition('t'::regclass, ...): the relation whose code it runs, followed as a read.
    const running = parsed.calls.flatMap((call) =>
      (relationCodePositions(call.name) ?? []).flatMap((position) => {
        const argument = call.relationArgs[position];
        return typeof argument === 'object' ? [argument.name] : [];
      }),
    );
    found(
      mergeReferences([
        {
          relations: [...parsed.qualified, ...named, ...running],
          written: parsed.written,
          inserts: parsed.inserts,
          updates: parsed.updates,
          deletes: parsed.deletes,
          functions: [...parsed.calls.map((call) => call.folded), ...parsed.keywordCalls],
          operators: parsed.operators,
          // array_in('{1}', 'int4'::regtype, -1) runs int4's code: a person's type of that name on the search path is walked too.
          // A name in call position is a conversion to the type of that name where no function fits (typeCallNames).
          types: [...parsed.types, ...parsed.calls.flatMap(dispatchedTypeNames), ...typeCallNames(parsed)],
          attributes: parsed.attributes,
          ...(options.rowSeparation && parsed.conditions.length > 0 ? { conditions: parsed.conditions } : {}),
          ...wholesaleSettings(statement.shows, parsed.calls),
        },
        ...inner,
      ]),
    );
  }
  return undefined;
}

/**
 * The names the statement writes in call position, each walked as a type of that name too: where
 * no function of the name fits one argument, PostgreSQL reads `name(x)` as a conversion to type
 * `name` (parse_func.c, func_get_detail's coercion fallback: the function's name, with its
 * qualification, looked up as a type name: `_name` is the array type), and runs that type's code
 * as a cast to it does (a domain's CHECK constraints, a field's domain, an input function).
 * Attribute notation `(x).name` is such a call where no column has the name (ParseFuncOrColumn),
 * and so are the keyword forms older servers read as calls. Every name, whatever its number of
 * arguments or whether a function matches too: the walk follows a type only when one has the name.
 */
function typeCallNames(parsed: Extract<ReturnType<typeof parsePostgres>, { ok: true }>): string[] {
  return [...parsed.calls.map((call) => call.folded), ...parsed.attributes, ...parsed.keywordCalls];
}

/**
 * Where rows are separated: a system column that is a row's physical or transaction coordinate,
 * in every form the server reads as one (a column reference's any part: ctid, o.ctid; a name
 * after an indirection: (o).ctid, (o.*).xmin; functional notation with one argument: ctid(o)),
 * and any TABLESAMPLE (system-columns.ts).
 */
function systemColumnsObjection(parsed: Extract<ReturnType<typeof parsePostgres>, { ok: true }>): Objection | undefined {
  if (parsed.samples.length > 0) return systemColumnObjection('TABLESAMPLE');
  for (const name of [...parsed.columns, ...parsed.attributes]) {
    const refused = systemColumnNameObjection(name);
    if (refused) return refused;
  }
  for (const call of parsed.calls) {
    if (call.argCount === 1 && PG_COORDINATE_COLUMNS.has(call.folded)) return systemColumnObjection(call.folded);
  }
  return undefined;
}

/**
 * Where rows are separated: a condition holds, on no column of the row, a form whose functions the
 * server chooses without a name the check can judge (pg-row-conditions.ts).
 */
function opaqueConditionObjection(form: string): Objection {
  return objection(
    'leaky-condition',
    `Refused: a condition of this statement (WHERE, JOIN ... ON, HAVING, or the select list of a subquery or CTE) uses ${form} on no column of the row, and PostgreSQL may run such a part of a condition on the rows the row-security policy hides, before its filter, where its error or time would tell those rows apart.`,
    'Compute the value on the client and pass it as a parameter ($1), or move it to the select list of the outer query, which runs only on the rows the policy shows.',
  );
}

/**
 * How the statement reads settings wholesale, as StatementReferences' `settings`: SHOW ALL (every
 * setting the login may read), pg_show_all_settings() (pg_settings' own function), or
 * current_setting() of a name that is not one string constant (`'primary_' || 'conninfo'`, a
 * column's value), which the statement check cannot compare with the names it refuses. pg_settings
 * itself is judged by the relation it resolves to (postgres-secret-settings.ts).
 */
function wholesaleSettings(shows: string | undefined, calls: readonly ParsedCall[]): { settings?: string } {
  if (shows === 'all') return { settings: 'SHOW ALL' };
  if (calls.some((call) => call.name === 'pg_show_all_settings')) return { settings: 'pg_show_all_settings()' };
  if (calls.some((call) => call.name === 'current_setting' && call.stringArgs[0] === undefined))
    return { settings: 'current_setting() of a name chosen when it runs' };
  return {};
}

/** The first wholesale read of settings among `all`, as StatementReferences' `settings`. */
function settingsOf(all: readonly StatementReferences[]): { settings?: string } {
  const settings = all.find((r) => r.settings !== undefined)?.settings;
  return settings === undefined ? {} : { settings };
}

/** One set of references holding each name of `all` once. */
function mergeReferences(all: readonly StatementReferences[]): StatementReferences {
  const union = (pick: (r: StatementReferences) => readonly string[] | undefined): string[] => [
    ...new Set(all.flatMap((r) => pick(r) ?? [])),
  ];
  return {
    relations: union((r) => r.relations),
    written: union((r) => r.written),
    inserts: union((r) => r.inserts),
    updates: union((r) => r.updates),
    deletes: union((r) => r.deletes),
    functions: union((r) => r.functions),
    operators: union((r) => r.operators),
    types: union((r) => r.types),
    attributes: union((r) => r.attributes),
    ...(all.some((r) => (r.conditions?.length ?? 0) > 0) ? { conditions: all.flatMap((r) => r.conditions ?? []) } : {}),
    ...settingsOf(all),
  };
}
