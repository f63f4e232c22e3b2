import { loadModule, parseSync } from 'libpg-query';

// PostgreSQL's own parser, compiled to WebAssembly: loaded once, when the daemon first imports the
// policy, so that every check after that is synchronous.
await loadModule();

/** A function call anywhere in the parse tree. */
export interface ParsedCall {
  /** Lower-cased, unqualified. */
  readonly name: string;
  /** The argument values that are string constants, by position (undefined where not a constant). */
  readonly stringArgs: readonly (string | undefined)[];
  /** Whether each argument is a numeric constant. */
  readonly numberArgs: readonly boolean[];
  readonly argCount: number;
}

/** What PostgreSQL's parser makes of a text. */
export type Parsed =
  | {
      readonly ok: true;
      readonly statements: readonly { readonly kind: string; readonly read: boolean }[];
      readonly calls: readonly ParsedCall[];
      /** Every relation named anywhere in the tree (FROM, JOIN, TABLE, subqueries), unqualified, as PostgreSQL folds it. */
      readonly relations: readonly string[];
      /** Every setting named by SET anywhere (a statement, a function's or role's SET clause), lower-cased. */
      readonly settings: readonly string[];
      /** Every relation an UPDATE writes, unqualified, as PostgreSQL folds it. */
      readonly updated: readonly string[];
      /** Every node anywhere in the tree that defines or runs code (CODE_KEYS), by node name. */
      readonly code: readonly string[];
    }
  | { readonly ok: false; readonly message: string };

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

function callOf(node: Node): ParsedCall {
  const parts = Array.isArray(node.funcname) ? node.funcname : [];
  const last = parts.at(-1);
  const name = isNode(last) && isNode(last.String) && typeof last.String.sval === 'string' ? last.String.sval : '';
  const args = Array.isArray(node.args) ? node.args : [];
  return { name: name.toLowerCase(), stringArgs: args.map(stringConstant), numberArgs: args.map(numberConstant), argCount: args.length };
}

/** What the walk collects from every statement's tree. */
interface Found {
  readonly calls: ParsedCall[];
  readonly relations: string[];
  readonly settings: string[];
  readonly updated: string[];
  readonly code: string[];
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
      for (const item of value) stack.push(item);
      continue;
    }
    if (!isNode(value)) continue;
    for (const [key, child] of Object.entries(value)) {
      if (WRITE_KEYS.has(key) || key === 'intoClause' || (key === 'lockingClause' && Array.isArray(child) && child.length > 0))
        writes = true;
      if (key === 'FuncCall' && isNode(child)) found.calls.push(callOf(child));
      const code = CODE_KEYS.get(key);
      if (code) found.code.push(code);
      if (key === 'RangeVar' && isNode(child) && typeof child.relname === 'string') found.relations.push(child.relname);
      // A SET statement, or the SET clause of CREATE/ALTER FUNCTION, ALTER ROLE/DATABASE/SYSTEM.
      if ((key === 'VariableSetStmt' || key === 'setstmt') && isNode(child) && typeof child.name === 'string')
        found.settings.push(child.name.toLowerCase());
      if (key === 'UpdateStmt' && isNode(child) && isNode(child.relation) && typeof child.relation.relname === 'string')
        found.updated.push(child.relation.relname);
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return writes;
}

/** A read as PostgreSQL's grammar sees it: a query with no write, lock or INTO; SHOW; EXPLAIN of such a query. */
function isRead(kind: string, body: Node, writes: boolean): boolean {
  if (kind === 'VariableShowStmt') return true;
  if (kind === 'SelectStmt' || kind === 'ExplainStmt')
    return !writes && (kind === 'SelectStmt' || (isNode(body.query) && 'SelectStmt' in body.query));
  return false;
}

/** Parses `sql` with PostgreSQL's parser. Never throws. */
export function parsePostgres(sql: string): Parsed {
  let tree: unknown;
  try {
    tree = parseSync(sql);
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  const stmts = isNode(tree) && Array.isArray(tree.stmts) ? tree.stmts : [];
  const found: Found = { calls: [], relations: [], settings: [], updated: [], code: [] };
  const statements = stmts.map((raw: unknown) => {
    const stmt = isNode(raw) && isNode(raw.stmt) ? raw.stmt : {};
    const [kind = 'unknown', body] = Object.entries(stmt)[0] ?? [];
    // From the statement's own node, so that its own kind (a top-level SET or UPDATE) is seen too.
    const writes = walk(stmt, found);
    return { kind, read: isRead(kind, isNode(body) ? body : {}, writes) };
  });
  return { ok: true, statements, ...found };
}
