import { REFERENCE_OPTIONS } from './function-references.js';
import { OPERATOR_NODE_KEYS, operatorNames } from './pg-operator-names.js';
import { type ConditionSite, conditionSites } from './pg-row-conditions.js';
import { parseRaw } from './pg-wasm.js';
import type { RelationArgument } from './relation-code.js';
import { roleStateOfStatement } from './role-state.js';
import { changesSharedSchema } from './shared-schema.js';

/** A function call anywhere in the parse tree. */
export interface ParsedCall {
  /** Lower-cased, unqualified. */
  readonly name: string;
  /** Unqualified, as PostgreSQL folds it (a quoted name keeps its case): what pg_proc.proname holds. */
  readonly folded: string;
  /** The argument values that are string constants, by position (undefined where not a constant). */
  readonly stringArgs: readonly (string | undefined)[];
  /** Whether each argument is a numeric constant. */
  readonly numberArgs: readonly boolean[];
  /** Each argument read as a relation (relation-code.ts): a string constant, cast to regclass or not; a number; else undefined. */
  readonly relationArgs: readonly RelationArgument[];
  /** Each argument that is a constant, maybe cast (`'int4'::regtype::oid`, `23`), by position (undefined where not one). */
  readonly constantArgs: readonly (ConstantArgument | undefined)[];
  readonly argCount: number;
}

/** A constant argument as written: a number's digits or a string's text, and the types it is cast to, innermost first (`pg_catalog.regtype`). */
export interface ConstantArgument {
  readonly value: string;
  readonly number: boolean;
  readonly casts: readonly string[];
}

/** What PostgreSQL's parser makes of a text. */
export type Parsed =
  | {
      readonly ok: true;
      readonly statements: readonly {
        readonly kind: string;
        readonly read: boolean;
        /** How the statement is named when it is not on the allow list for unsigned context values (ALLOWED_KINDS). */
        readonly notAllowed?: string;
        /** How the statement is named when it changes role state that outlasts the call (role-state.ts). */
        readonly roleState?: string;
        /** How the statement is named when it changes the schema or permissions, or may (shared-schema.ts). */
        readonly schemaChange?: string;
        /** The setting a SHOW names, lower-cased (`all` for SHOW ALL). */
        readonly shows?: string;
      }[];
      readonly calls: readonly ParsedCall[];
      /** Every name part of every column reference (`c.reltuples` gives `c` and `reltuples`), as folded. */
      readonly columns: readonly string[];
      /** The column references of one part (`relname`, or `c` as a row value), as folded. */
      readonly bare: readonly string[];
      /** Each star column reference by what qualifies it (`c` for `c.*`, '' for `*` and `TABLE t`'s), as folded. */
      readonly stars: readonly string[];
      /** Each relation named in FROM with its alias, and whether the alias renames its columns (`pg_class AS c(a, b)`). */
      readonly ranges: readonly { readonly relation: string; readonly alias?: string; readonly renamesColumns: boolean }[];
      /** Every relation named anywhere in the tree (FROM, JOIN, TABLE, subqueries), unqualified, as PostgreSQL folds it. */
      readonly relations: readonly string[];
      /** The same relations as names the server resolves (`"schema"."name"`, each part quoted as folded), once each. */
      readonly qualified: readonly string[];
      /** Every setting named by SET anywhere (a statement, a function's or role's SET clause), lower-cased. */
      readonly settings: readonly string[];
      /** Every relation an UPDATE writes, unqualified, as PostgreSQL folds it. */
      readonly updated: readonly string[];
      /**
       * Every relation an INSERT, UPDATE, DELETE, MERGE, TRUNCATE or COPY ... FROM writes, as `qualified`
       * names it (and in `qualified` too): what a write to it runs (rules, triggers, defaults,
       * constraints) is resolved as well as what it names.
       */
      readonly written: readonly string[];
      /**
       * The relations among `written` whose rows the statement creates or changes, as `written`
       * names them: `inserts` those an INSERT, a MERGE's WHEN NOT MATCHED THEN INSERT or COPY ...
       * FROM adds rows to; `updates` those an UPDATE, INSERT ... ON CONFLICT DO UPDATE or a MERGE's
       * THEN UPDATE changes rows of. A DELETE or TRUNCATE is in neither: it creates no row.
       * `deletes` those a DELETE or a MERGE's THEN DELETE removes rows of (what a foreign key's
       * ON DELETE action follows).
       */
      readonly inserts: readonly string[];
      readonly updates: readonly string[];
      readonly deletes: readonly string[];
      /** Every node anywhere in the tree that defines or runs code (CODE_KEYS), by node name. */
      readonly code: readonly string[];
      /**
       * Every function named without a call, lower-cased and unqualified: DDL options such as an
       * aggregate's sfunc (REFERENCE_OPTIONS), CREATE CAST WITH FUNCTION, CREATE CONVERSION FROM,
       * an operator class's FUNCTION n, a trigger's or transform's function.
       */
      readonly references: readonly string[];
      /**
       * Where the server may call a function the tree shows as no FuncCall, for the resolve step:
       * operators by name, unqualified (`###` as written, and those a keyword form makes the
       * server look up: BETWEEN's `>=` and `<=`, `IN (SELECT ...)`'s `=`, JOIN USING's `=`;
       * pg-operator-names.ts), type names (casts, as folded), names after a dot (`o.peek` is
       * peek(o) when no column is named so), and SQL/JSON keyword forms a server before
       * PostgreSQL 16/17 reads as calls of functions of that name (json_scalar).
       */
      readonly operators: readonly string[];
      readonly types: readonly string[];
      readonly attributes: readonly string[];
      readonly keywordCalls: readonly string[];
      /** The sampling method of each TABLESAMPLE (RangeTableSample), as folded. */
      readonly samples: readonly string[];
      /** Each call in a condition on no column of the row (pg-row-conditions.ts). */
      readonly conditions: readonly ConditionSite[];
      /** A form in a condition, on no column of the row, whose functions cannot be named here. */
      readonly opaqueCondition?: string;
    }
  | {
      readonly ok: false;
      /**
       * syntax: the grammar rejects the text; broken: the parser itself failed on it; restarting:
       * not ready after such a failure; too-large: its tree is over MAX_PARSE_TREE_CHARS.
       */
      readonly failure: 'syntax' | 'broken' | 'restarting' | 'too-large';
      readonly message: string;
    };

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/** Nodes that define code which runs later, or run an anonymous block (context-code.ts). */
const CODE_KEYS: ReadonlyMap<string, string> = new Map([
  ['CreateFunctionStmt', 'CREATE FUNCTION'],
  ['AlterFunctionStmt', 'ALTER FUNCTION'],
  ['DoStmt', 'DO'],
  ['CreateTrigStmt', 'CREATE TRIGGER'],
  ['CreateEventTrigStmt', 'CREATE EVENT TRIGGER'],
  ['RuleStmt', 'CREATE RULE'],
  ['CreatePLangStmt', 'CREATE LANGUAGE'],
  ['CreateTransformStmt', 'CREATE TRANSFORM'],
]);

/**
 * Statement kinds allowed where context values are not signed (context-code.ts): reads, DML and
 * DDL of objects that hold data and expressions, never a function named to be called later. Any
 * other kind, including one a later PostgreSQL adds, is refused there.
 */
const ALLOWED_KINDS = new Set([
  'SelectStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'ExplainStmt',
  'VariableShowStmt',
  'CallStmt',
  'CopyStmt',
  'VacuumStmt',
  'RefreshMatViewStmt',
  'ReindexStmt',
  'ClusterStmt',
  'CreateStmt',
  'IndexStmt',
  'ViewStmt',
  'CreateTableAsStmt',
  'CreateSeqStmt',
  'AlterSeqStmt',
  'DropStmt',
  'CommentStmt',
  'TruncateStmt',
  'GrantStmt',
  'CreatedbStmt',
  'DropdbStmt',
]);

/** Object kinds ALTER TABLE and RENAME may apply to there. */
const ALLOWED_OBJECTS = new Set([
  'OBJECT_TABLE',
  'OBJECT_INDEX',
  'OBJECT_VIEW',
  'OBJECT_MATVIEW',
  'OBJECT_SEQUENCE',
  'OBJECT_SCHEMA',
  'OBJECT_COLUMN',
  'OBJECT_TABCONSTRAINT',
  'OBJECT_DATABASE',
]);

const KIND_LABELS: ReadonlyMap<string, string> = new Map([
  ['CreateOpClassStmt', 'CREATE OPERATOR CLASS'],
  ['CreateOpFamilyStmt', 'CREATE OPERATOR FAMILY'],
  ['AlterOpFamilyStmt', 'ALTER OPERATOR FAMILY'],
  ['CreateFdwStmt', 'CREATE FOREIGN DATA WRAPPER'],
  ['CreateForeignServerStmt', 'CREATE SERVER'],
  ['CreatePLangStmt', 'CREATE LANGUAGE'],
  ['CompositeTypeStmt', 'CREATE TYPE'],
  ['CreateEnumStmt', 'CREATE TYPE'],
  ['CreateRangeStmt', 'CREATE TYPE'],
  ['CreateAmStmt', 'CREATE ACCESS METHOD'],
  ['CreateStatsStmt', 'CREATE STATISTICS'],
]);

const words = (name: string): string =>
  name
    .replace(/^OBJECT_/, '')
    .replace(/^TS/, 'TEXT SEARCH ')
    .replaceAll('_', ' ');

/** How a statement outside the allow list is named, or undefined when it is allowed (CREATE SCHEMA: each element). */
function notAllowed(kind: string, body: Node): string | undefined {
  if (kind === 'CreateSchemaStmt') {
    for (const element of Array.isArray(body.schemaElts) ? body.schemaElts : []) {
      const [inner = 'unknown', innerBody] = isNode(element) ? (Object.entries(element)[0] ?? []) : [];
      const label = notAllowed(inner, isNode(innerBody) ? innerBody : {});
      if (label) return label;
    }
    return undefined;
  }
  if (kind === 'AlterTableStmt')
    return typeof body.objtype === 'string' && ALLOWED_OBJECTS.has(body.objtype) ? undefined : `ALTER ${words(String(body.objtype))}`;
  if (kind === 'RenameStmt')
    return typeof body.renameType === 'string' && ALLOWED_OBJECTS.has(body.renameType)
      ? undefined
      : `ALTER ${words(String(body.renameType))}`;
  if (ALLOWED_KINDS.has(kind)) return undefined;
  return statementLabel(kind, body);
}

/** How a statement of `kind` is named in a refusal (`CREATE FUNCTION`, `ALTER TABLE`, `SELECT ... INTO`). */
/**
 * How a statement is named when it changes the schema or permissions, or may (shared-schema.ts):
 * an EXPLAIN is judged by the statement it wraps, which EXPLAIN ANALYZE runs (`EXPLAIN ANALYZE
 * CREATE TABLE t AS ...`, `... CREATE MATERIALIZED VIEW ...`).
 */
function schemaChangeOf(kind: string, node: Node, into: boolean): string | undefined {
  if (kind === 'ExplainStmt' && isNode(node.query)) {
    const [inner = 'unknown', body] = Object.entries(node.query)[0] ?? [];
    const label = schemaChangeOf(inner, isNode(body) ? body : {}, into);
    return label === undefined ? undefined : `EXPLAIN ${label}`;
  }
  return changesSharedSchema(kind, into) ? statementLabel(kind, node) : undefined;
}

function statementLabel(kind: string, body: Node): string {
  if (kind === 'DefineStmt' && typeof body.kind === 'string') return `CREATE ${words(body.kind)}`;
  if (kind === 'AlterTableStmt' && typeof body.objtype === 'string') return `ALTER ${words(body.objtype)}`;
  if (kind === 'SelectStmt') return 'SELECT ... INTO';
  if (kind === 'CreateStmt') return 'CREATE TABLE';
  if (kind === 'ViewStmt') return 'CREATE VIEW';
  if (kind === 'IndexStmt') return 'CREATE INDEX';
  if (kind === 'CreateTableAsStmt') return 'CREATE TABLE ... AS';
  if (kind === 'CreateSeqStmt') return 'CREATE SEQUENCE';
  if (kind === 'CreatedbStmt') return 'CREATE DATABASE';
  if (kind === 'GrantStmt') return body.is_grant === false ? 'REVOKE' : 'GRANT';
  return (
    KIND_LABELS.get(kind) ??
    CODE_KEYS.get(kind) ??
    kind
      .replace(/Stmt$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toUpperCase()
  );
}

/** The function a DefElem option names (TypeName, String or a qualified List), lower-cased and unqualified. */
function referenceOf(arg: unknown): string | undefined {
  if (!isNode(arg)) return undefined;
  if (isNode(arg.String) && typeof arg.String.sval === 'string') return arg.String.sval.toLowerCase();
  const names = isNode(arg.TypeName) ? arg.TypeName.names : isNode(arg.List) ? arg.List.items : undefined;
  return Array.isArray(names) ? referenceOf(names.at(-1)) : undefined;
}

/** The unqualified name of a function list (`funcname`, `objname`), lower-cased. */
const lastName = (names: unknown): string | undefined => (Array.isArray(names) ? referenceOf(names.at(-1)) : undefined);

/** Functions the node `key` names without calling them, pushed onto `out`. */
function collectReferences(key: string, node: Node, out: string[]): void {
  const push = (name: string | undefined): void => {
    if (name !== undefined) out.push(name);
  };
  if (key === 'DefineStmt' || key === 'AlterOperatorStmt' || key === 'AlterTypeStmt') {
    const options = key === 'DefineStmt' ? node.definition : node.options;
    for (const item of Array.isArray(options) ? options : []) {
      const element = isNode(item) ? item.DefElem : undefined;
      if (isNode(element) && typeof element.defname === 'string' && REFERENCE_OPTIONS.has(element.defname.toLowerCase()))
        push(referenceOf(element.arg));
    }
  }
  if (key === 'CreateCastStmt' && isNode(node.func)) push(lastName(node.func.objname));
  if (key === 'CreateConversionStmt') push(lastName(node.func_name));
  if (key === 'CreateOpClassItem' && node.itemtype === 2 && isNode(node.name)) push(lastName(node.name.objname));
  if (key === 'CreateTransformStmt') for (const fn of [node.fromsql, node.tosql]) if (isNode(fn)) push(lastName(fn.objname));
  if (key === 'CreateTrigStmt' || key === 'CreateEventTrigStmt') push(lastName(node.funcname));
}

/** Keys whose presence anywhere under a statement makes it change data or take locks. */
const WRITE_KEYS = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

function stringConstant(node: unknown): string | undefined {
  const constant = isNode(node) ? node.A_Const : undefined;
  const sval = isNode(constant) && isNode(constant.sval) ? constant.sval.sval : undefined;
  return typeof sval === 'string' ? sval : undefined;
}

function numberConstant(node: unknown): boolean {
  const constant = isNode(node) ? node.A_Const : undefined;
  return isNode(constant) && ('ival' in constant || 'fval' in constant);
}

/** `regclass` or `pg_catalog.regclass`, as a TypeCast's type names it. */
function isRegclassType(typeName: unknown): boolean {
  // As folded: a quoted "REGCLASS" is another type.
  const names =
    isNode(typeName) && Array.isArray(typeName.names)
      ? typeName.names.map((n) => (isNode(n) && isNode(n.String) ? n.String.sval : undefined))
      : [];
  return (names.length === 1 && names[0] === 'regclass') || (names.length === 2 && names[0] === 'pg_catalog' && names[1] === 'regclass');
}

/** An argument read as a relation: a string constant or one cast to regclass names one; a number (cast or not) is an OID. */
function relationArgument(node: unknown): RelationArgument {
  const cast = isNode(node) ? node.TypeCast : undefined;
  const value = isNode(cast) && isRegclassType(cast.typeName) ? cast.arg : node;
  if (numberConstant(value)) return 'number';
  const name = stringConstant(value);
  return name === undefined ? undefined : { name };
}

/**
 * The constant `node` is, through any casts (TypeCast, `::` or CAST), or undefined: a NULL, an
 * expression, or a cast to an array type or with a type modifier.
 */
function constantOf(node: unknown): ConstantArgument | undefined {
  const casts: string[] = [];
  let current = node;
  while (isNode(current) && isNode(current.TypeCast)) {
    const cast = current.TypeCast;
    const type = isNode(cast.typeName) ? cast.typeName : {};
    if (Array.isArray(type.arrayBounds) || Array.isArray(type.typmods) || type.setof === true) return undefined;
    casts.unshift(strings(type.names).join('.'));
    current = cast.arg;
  }
  const constant = isNode(current) ? current.A_Const : undefined;
  if (!isNode(constant) || constant.isnull === true) return undefined;
  if (isNode(constant.sval)) return { value: typeof constant.sval.sval === 'string' ? constant.sval.sval : '', number: false, casts };
  if (isNode(constant.ival)) return { value: String(typeof constant.ival.ival === 'number' ? constant.ival.ival : 0), number: true, casts };
  if (isNode(constant.fval) && typeof constant.fval.fval === 'string') return { value: constant.fval.fval, number: true, casts };
  return undefined;
}

function callOf(node: Node): ParsedCall {
  const parts = Array.isArray(node.funcname) ? node.funcname : [];
  const last = parts.at(-1);
  const name = isNode(last) && isNode(last.String) && typeof last.String.sval === 'string' ? last.String.sval : '';
  const args = Array.isArray(node.args) ? node.args : [];
  return {
    name: name.toLowerCase(),
    folded: name,
    stringArgs: args.map(stringConstant),
    numberArgs: args.map(numberConstant),
    relationArgs: args.map(relationArgument),
    constantArgs: args.map(constantOf),
    argCount: args.length,
  };
}

/** What the walk collects from every statement's tree. */
interface Found {
  /** A SELECT ... INTO anywhere in the tree, which creates a table. */
  into: boolean;
  readonly calls: ParsedCall[];
  readonly columns: Set<string>;
  readonly bare: Set<string>;
  readonly stars: Set<string>;
  readonly ranges: { relation: string; alias?: string; renamesColumns: boolean }[];
  readonly relations: string[];
  readonly qualified: Set<string>;
  readonly settings: string[];
  readonly updated: string[];
  readonly written: Set<string>;
  readonly inserts: Set<string>;
  readonly updates: Set<string>;
  readonly deletes: Set<string>;
  readonly code: string[];
  readonly references: string[];
  readonly operators: Set<string>;
  readonly types: Set<string>;
  readonly attributes: Set<string>;
  readonly keywordCalls: Set<string>;
  readonly samples: string[];
}

/**
 * SQL/JSON keyword forms PostgreSQL 17's grammar makes nodes of; the servers before it (16, or
 * 17 for the query functions) read them as calls, so a function of that name (public.json_scalar)
 * would run. JsonFuncExpr is named by its `op`.
 */
const KEYWORD_CALLS: ReadonlyMap<string, string> = new Map([
  ['JsonScalarExpr', 'json_scalar'],
  ['JsonSerializeExpr', 'json_serialize'],
  ['JsonObjectConstructor', 'json_object'],
  ['JsonArrayConstructor', 'json_array'],
  ['JsonArrayQueryConstructor', 'json_array'],
  ['JsonParseExpr', 'json'],
  ['JsonObjectAgg', 'json_objectagg'],
  ['JsonArrayAgg', 'json_arrayagg'],
  ['JsonTable', 'json_table'],
  ['MergeSupportFunc', 'merge_action'],
]);

const JSON_FUNC_OPS: ReadonlyMap<string, string> = new Map([
  ['JSON_EXISTS_OP', 'json_exists'],
  ['JSON_QUERY_OP', 'json_query'],
  ['JSON_VALUE_OP', 'json_value'],
]);

/** The String values of a name list (`name`, `names`, `fields`, `indirection`), as folded. */
function strings(list: unknown): string[] {
  const out: string[] = [];
  for (const item of Array.isArray(list) ? list : []) {
    const value = isNode(item) && isNode(item.String) ? item.String.sval : undefined;
    if (typeof value === 'string') out.push(value);
  }
  return out;
}

/** What the resolve step follows beyond calls and relations (Parsed's operators, types, attributes, keywordCalls). */
function collectRoutes(key: string, node: Node, found: Found): void {
  if (OPERATOR_KEYS.has(key)) {
    // x ### y, BETWEEN's >= and <=, x IN (SELECT ...)'s =, JOIN USING's =, ORDER BY x USING ###.
    for (const name of operatorNames(key, node)) found.operators.add(name);
  } else if (key === 'typeName' || key === 'TypeName') {
    const last = strings(node.names).at(-1);
    if (last !== undefined) found.types.add(last);
  } else if (key === 'ColumnRef') {
    const fields = strings(node.fields);
    for (const field of fields.slice(1)) found.attributes.add(field);
  } else if (key === 'A_Indirection') {
    for (const field of strings(node.indirection)) found.attributes.add(field);
  } else if (key === 'JsonFuncExpr') {
    const name = typeof node.op === 'string' ? JSON_FUNC_OPS.get(node.op) : undefined;
    if (name) found.keywordCalls.add(name);
  } else {
    const name = KEYWORD_CALLS.get(key);
    if (name) found.keywordCalls.add(name);
  }
}

/**
 * Walks one statement's tree without recursion (its depth is the input's): collects every
 * FuncCall, relation, SET setting and UPDATE target, and whether anything in it writes, locks or
 * stores (INTO).
 */
function walk(root: unknown, found: Found): boolean {
  let writes = false;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    if (!isNode(value)) continue;
    // for-in, not Object.entries: most nodes are constants and locations, and the tree of a long
    // statement has millions of keys, so no array is built per node.
    for (const key in value) {
      const child = value[key];
      if (typeof child !== 'object' || child === null) continue;
      stack.push(child);
      if (!SPECIAL_KEYS.has(key)) continue;
      if (WRITE_KEYS.has(key) || key === 'intoClause' || (key === 'lockingClause' && Array.isArray(child) && child.length > 0))
        writes = true;
      if (key === 'intoClause') found.into = true;
      if (!isNode(child)) continue;
      if (key === 'FuncCall') found.calls.push(callOf(child));
      // CALL's procedure is a FuncCall's fields without the node around them.
      if (key === 'CallStmt' && isNode(child.funccall)) found.calls.push(callOf(child.funccall));
      if (ROUTE_KEYS.has(key)) collectRoutes(key, child, found);
      collectReferences(key, child, found.references);
      const code = CODE_KEYS.get(key);
      if (code) found.code.push(code);
      if (key === 'ColumnRef') {
        const fields = strings(child.fields);
        for (const field of fields) found.columns.add(field);
        if (fields.length === 1 && Array.isArray(child.fields) && child.fields.length === 1) found.bare.add(fields[0] as string);
        if (Array.isArray(child.fields) && child.fields.some((f) => isNode(f) && f.A_Star !== undefined))
          found.stars.add(fields.at(-1) ?? '');
      }
      if (key === 'RangeTableSample') found.samples.push(strings(child.method).at(-1) ?? '');
      if (key === 'RangeVar' && typeof child.relname === 'string') {
        const alias = isNode(child.alias) ? child.alias : undefined;
        found.ranges.push({
          relation: child.relname,
          ...(typeof alias?.aliasname === 'string' ? { alias: alias.aliasname } : {}),
          renamesColumns: Array.isArray(alias?.colnames) && alias.colnames.length > 0,
        });
        found.relations.push(child.relname);
        found.qualified.add(qualifiedName(child));
      }
      // A SET statement, or the SET clause of CREATE/ALTER FUNCTION, ALTER ROLE/DATABASE/SYSTEM.
      if ((key === 'VariableSetStmt' || key === 'setstmt') && typeof child.name === 'string') found.settings.push(child.name.toLowerCase());
      if (key === 'UpdateStmt' && isNode(child.relation) && typeof child.relation.relname === 'string')
        found.updated.push(child.relation.relname);
      // A write's target is a bare RangeVar (no `RangeVar` key), so the branch above never sees it.
      if (TARGET_KEYS.has(key) && isNode(child.relation) && typeof child.relation.relname === 'string') {
        const name = qualifiedName(child.relation);
        found.qualified.add(name);
        if (key !== 'CopyStmt' || child.is_from === true) found.written.add(name);
        for (const event of changedRows(key, child))
          (event === 'insert' ? found.inserts : event === 'update' ? found.updates : found.deletes).add(name);
      }
      if (key === 'TruncateStmt' && Array.isArray(child.relations))
        for (const item of child.relations) if (isNode(item) && isNode(item.RangeVar)) found.written.add(qualifiedName(item.RangeVar));
      // REFRESH runs the materialised view's query: resolved as a read of it.
      if (key === 'RefreshMatViewStmt' && isNode(child.relation) && typeof child.relation.relname === 'string')
        found.qualified.add(qualifiedName(child.relation));
    }
  }
  return writes;
}

const OPERATOR_KEYS: ReadonlySet<string> = new Set(OPERATOR_NODE_KEYS);

const ROUTE_KEYS: ReadonlySet<string> = new Set([
  ...OPERATOR_NODE_KEYS,
  'typeName',
  'TypeName',
  'ColumnRef',
  'A_Indirection',
  'JsonFuncExpr',
  ...KEYWORD_CALLS.keys(),
]);

/**
 * What the write statement `key` (its node `node`) does to the rows of its target: adds them
 * (`insert`), changes them (`update`), removes them (`delete`), or none (COPY TO). A MERGE by its
 * WHEN clauses' commands; INSERT ... ON CONFLICT DO UPDATE both adds and changes.
 */
function changedRows(key: string, node: Node): ('insert' | 'update' | 'delete')[] {
  if (key === 'InsertStmt') {
    const conflict = isNode(node.onConflictClause) ? node.onConflictClause : undefined;
    return conflict?.action === 'ONCONFLICT_UPDATE' ? ['insert', 'update'] : ['insert'];
  }
  if (key === 'UpdateStmt') return ['update'];
  if (key === 'DeleteStmt') return ['delete'];
  if (key === 'CopyStmt') return node.is_from === true ? ['insert'] : [];
  if (key === 'MergeStmt') {
    const commands = (Array.isArray(node.mergeWhenClauses) ? node.mergeWhenClauses : []).map((clause) =>
      isNode(clause) && isNode(clause.MergeWhenClause) ? clause.MergeWhenClause.commandType : undefined,
    );
    // A clause read in another form is taken as all three.
    return [
      ...(commands.some((c) => c !== 'CMD_UPDATE' && c !== 'CMD_DELETE' && c !== 'CMD_NOTHING') ? ['insert' as const] : []),
      ...(commands.some((c) => c !== 'CMD_INSERT' && c !== 'CMD_DELETE' && c !== 'CMD_NOTHING') ? ['update' as const] : []),
      ...(commands.some((c) => c !== 'CMD_INSERT' && c !== 'CMD_UPDATE' && c !== 'CMD_NOTHING') ? ['delete' as const] : []),
    ];
  }
  return [];
}

/** Statements whose `relation` is the table they write (COPY: when FROM) or, COPY TO, read. */
const TARGET_KEYS: ReadonlySet<string> = new Set([...WRITE_KEYS, 'CopyStmt']);

/** Every key `walk` looks at beyond descending into it. */
const SPECIAL_KEYS: ReadonlySet<string> = new Set([
  ...TARGET_KEYS,
  'TruncateStmt',
  'RefreshMatViewStmt',
  ...CODE_KEYS.keys(),
  'intoClause',
  'lockingClause',
  'FuncCall',
  'CallStmt',
  'RangeVar',
  'RangeTableSample',
  'VariableSetStmt',
  'setstmt',
  // collectReferences
  'DefineStmt',
  'AlterOperatorStmt',
  'AlterTypeStmt',
  'CreateCastStmt',
  'CreateConversionStmt',
  'CreateOpClassItem',
  'CreateTransformStmt',
  'CreateTrigStmt',
  'CreateEventTrigStmt',
  ...ROUTE_KEYS,
]);

/** A read as PostgreSQL's grammar sees it: a query with no write, lock or INTO; SHOW; EXPLAIN of such a query. */
function isRead(kind: string, body: Node, writes: boolean): boolean {
  if (kind === 'VariableShowStmt') return true;
  if (kind === 'SelectStmt' || kind === 'ExplainStmt')
    return !writes && (kind === 'SelectStmt' || (isNode(body.query) && 'SelectStmt' in body.query));
  return false;
}

/**
 * The largest parse tree read, in characters of the parser's JSON: reading it costs about 6 ns a
 * character, and walking it as much again, so 1.5 MB is about 15 ms. An INSERT of 3,000 rows of
 * four values makes 1.1 MB; a long SELECT of 500 columns 0.2 MB.
 */
export const MAX_PARSE_TREE_CHARS = 1.5 * 1024 * 1024;

export const megabytes = (chars: number): string => `${(chars / (1024 * 1024)).toFixed(1)} MB`;

/** Parses `sql` with PostgreSQL's parser. Never throws. */
export function parsePostgres(sql: string): Parsed {
  const raw = parseRaw(sql);
  if (!raw.ok) return raw;
  if (raw.json.length > MAX_PARSE_TREE_CHARS) return { ok: false, failure: 'too-large', message: megabytes(raw.json.length) };
  const tree: unknown = JSON.parse(raw.json);
  const stmts = isNode(tree) && Array.isArray(tree.stmts) ? tree.stmts : [];
  const found: Found = {
    into: false,
    calls: [],
    columns: new Set(),
    bare: new Set(),
    stars: new Set(),
    ranges: [],
    relations: [],
    qualified: new Set(),
    settings: [],
    updated: [],
    written: new Set(),
    inserts: new Set(),
    updates: new Set(),
    deletes: new Set(),
    code: [],
    references: [],
    operators: new Set(),
    types: new Set(),
    attributes: new Set(),
    keywordCalls: new Set(),
    samples: [],
  };
  const statements = stmts.map((raw: unknown) => {
    const stmt = isNode(raw) && isNode(raw.stmt) ? raw.stmt : {};
    const [kind = 'unknown', body] = Object.entries(stmt)[0] ?? [];
    // From the statement's own node, so that its own kind (a top-level SET or UPDATE) is seen too.
    const writes = walk(stmt, found);
    const node = isNode(body) ? body : {};
    const label = notAllowed(kind, node);
    const roleState = roleStateOfStatement(kind, node);
    const schemaChange = schemaChangeOf(kind, node, found.into);
    return {
      kind,
      read: isRead(kind, node, writes),
      ...(label ? { notAllowed: label } : {}),
      ...(roleState ? { roleState } : {}),
      ...(schemaChange ? { schemaChange } : {}),
      ...(kind === 'VariableShowStmt' && typeof node.name === 'string' ? { shows: node.name.toLowerCase() } : {}),
    };
  });
  const scan = conditionSites(stmts, operatorNames);
  return {
    ok: true,
    statements,
    conditions: scan.sites,
    ...(scan.opaque ? { opaqueCondition: scan.opaque } : {}),
    ...found,
    columns: [...found.columns],
    bare: [...found.bare],
    stars: [...found.stars],
    qualified: [...found.qualified],
    written: [...found.written],
    inserts: [...found.inserts],
    updates: [...found.updates],
    deletes: [...found.deletes],
    operators: [...found.operators],
    types: [...found.types],
    attributes: [...found.attributes],
    keywordCalls: [...found.keywordCalls],
  };
}

/** A RangeVar as text that regclass input reads back to the same relation: `"db"."schema"."name"`, parts as folded. */
function qualifiedName(range: Node): string {
  const parts = [range.catalogname, range.schemaname, range.relname].filter(
    (part): part is string => typeof part === 'string' && part !== '',
  );
  return parts.map((part) => `"${part.replaceAll('"', '""')}"`).join('.');
}
