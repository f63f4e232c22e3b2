import { parseRaw } from '../../../../../daemon/policy/pg-wasm.js';

/**
 * What in one of hanactl's own PostgreSQL statements the server would look up on the session's
 * search_path, by PostgreSQL's parser: a login whose search_path names a schema before
 * pg_catalog (`public, pg_catalog`) puts a person's function, operator, type, relation or
 * collation of the same name ahead of the built-in (CVE-2018-1058), and hanactl's own statement
 * then runs a person's code outside every check. Each finding names the form and what it looks up.
 *
 * Looked up by name (parse_expr.c, parse_func.c, parse_oper.c, parse_type.c, parse_relation.c):
 * a function not qualified by pg_catalog; an operator not written OPERATOR(pg_catalog.op); the
 * keyword forms that compare with an operator found by its symbol (IN, NOT IN, LIKE, ILIKE,
 * SIMILAR TO, BETWEEN, IS [NOT] DISTINCT FROM, NULLIF, CASE x WHEN, IN (SELECT ...), x op ANY
 * (SELECT ...) with an unqualified op, JOIN USING, NATURAL JOIN, ORDER BY ... USING op); a type
 * not qualified (keyword types such as `int` and `boolean` come out of the grammar as pg_catalog's); a relation not
 * qualified (other than a WITH query's name); a collation not qualified; and a constant name
 * handed to a reg* type or to_reg*() that is not qualified (its input function resolves it on
 * the path). Safe: ORDER BY, DISTINCT, GROUP BY, GREATEST/LEAST and UNION use the type's default
 * operator class, found by type, not by name.
 */
export function searchPathLookups(sql: string): string[] {
  const raw = parseRaw(sql);
  if (!raw.ok) return [`does not parse: ${raw.message}`];
  const tree = JSON.parse(raw.json) as unknown;
  const ctes = new Set<string>();
  collect(tree, (key, node) => {
    if (key === 'CommonTableExpr' && typeof node.ctename === 'string') ctes.add(node.ctename);
  });
  const found: string[] = [];
  collect(tree, (key, node) => {
    const finding = judge(key, node, ctes);
    if (finding) found.push(finding);
  });
  return found;
}

type Node = Record<string, unknown>;

function collect(value: unknown, visit: (key: string, node: Node) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) collect(item, visit);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value as Node)) {
    // A type's name sits unwrapped under its node's `typeName`.
    const kind = key === 'typeName' ? 'TypeName' : key;
    if (inner !== null && typeof inner === 'object' && !Array.isArray(inner) && /^[A-Z]/.test(kind)) visit(kind, inner as Node);
    collect(inner, visit);
  }
}

/** The parts of a name list (`[{String: {sval}}]`). */
function parts(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) => ((item as { String?: { sval?: string } }).String?.sval ?? '*') as string);
}

const pinned = (name: readonly string[]): boolean => name.length >= 2 && name[0] === 'pg_catalog';

const KEYWORD_FORMS: Readonly<Record<string, string>> = {
  AEXPR_IN: 'IN (list)',
  AEXPR_LIKE: 'LIKE',
  AEXPR_ILIKE: 'ILIKE',
  AEXPR_SIMILAR: 'SIMILAR TO',
  AEXPR_BETWEEN: 'BETWEEN',
  AEXPR_NOT_BETWEEN: 'NOT BETWEEN',
  AEXPR_BETWEEN_SYM: 'BETWEEN SYMMETRIC',
  AEXPR_NOT_BETWEEN_SYM: 'NOT BETWEEN SYMMETRIC',
  AEXPR_DISTINCT: 'IS DISTINCT FROM',
  AEXPR_NOT_DISTINCT: 'IS NOT DISTINCT FROM',
  AEXPR_NULLIF: 'NULLIF',
};

/** Types whose input function resolves a name on the search path. */
const NAME_TYPES = new Set([
  'regclass',
  'regproc',
  'regprocedure',
  'regoper',
  'regoperator',
  'regtype',
  'regcollation',
  'regconfig',
  'regdictionary',
]);
const NAME_FUNCTIONS = new Set([
  'to_regclass',
  'to_regproc',
  'to_regprocedure',
  'to_regoper',
  'to_regoperator',
  'to_regtype',
  'to_regcollation',
]);

function constantText(node: unknown): string | undefined {
  return (node as { A_Const?: { sval?: { sval?: string } } } | undefined)?.A_Const?.sval?.sval;
}

function judge(key: string, node: Node, ctes: ReadonlySet<string>): string | undefined {
  switch (key) {
    case 'FuncCall': {
      const name = parts(node.funcname);
      if (!pinned(name)) return `function ${name.join('.')}()`;
      if (NAME_FUNCTIONS.has(name[1] as string)) {
        const arg = constantText((node.args as unknown[] | undefined)?.[0]);
        if (arg !== undefined && !arg.includes('.')) return `${name[1]}('${arg}') resolves an unqualified name`;
      }
      return undefined;
    }
    case 'A_Expr': {
      const kind = String(node.kind);
      const form = KEYWORD_FORMS[kind];
      if (form) return `${form} (looks up ${parts(node.name).join('.')} by name)`;
      const name = parts(node.name);
      return pinned(name) ? undefined : `operator ${name.join('.')}`;
    }
    case 'SubLink': {
      const type = String(node.subLinkType);
      if (type !== 'ANY_SUBLINK' && type !== 'ALL_SUBLINK' && type !== 'ROWCOMPARE_SUBLINK') return undefined;
      const name = parts(node.operName);
      if (name.length === 0) return 'IN (SELECT ...) (looks up = by name)';
      return pinned(name) ? undefined : `operator ${name.join('.')} (SELECT ...)`;
    }
    case 'CaseExpr':
      return node.arg !== undefined ? 'CASE x WHEN (looks up = by name)' : undefined;
    case 'JoinExpr':
      if (node.isNatural === true) return 'NATURAL JOIN (looks up = by name)';
      return node.usingClause !== undefined ? 'JOIN USING (looks up = by name)' : undefined;
    case 'SortBy': {
      const name = parts(node.useOp);
      return name.length > 0 && !pinned(name) ? `ORDER BY ... USING ${name.join('.')}` : undefined;
    }
    case 'TypeName': {
      const name = parts(node.names);
      return pinned(name) ? undefined : `type ${name.join('.')}`;
    }
    case 'TypeCast': {
      const type = parts((node.typeName as Node | undefined)?.names);
      const text = constantText(node.arg);
      if (pinned(type) && NAME_TYPES.has(type[1] as string) && text !== undefined && !text.includes('.'))
        return `'${text}'::${type[1]} resolves an unqualified name`;
      return undefined;
    }
    case 'RangeVar': {
      const relation = String(node.relname);
      return node.schemaname === undefined && !ctes.has(relation) ? `relation ${relation}` : undefined;
    }
    case 'CollateClause': {
      const name = parts(node.collname);
      return pinned(name) ? undefined : `collation ${name.join('.')}`;
    }
    default:
      return undefined;
  }
}
