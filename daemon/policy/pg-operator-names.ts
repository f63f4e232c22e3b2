/**
 * The operators PostgreSQL looks up by name for a node of the raw parse tree, as the resolve step
 * must judge them: unqualified, since the server looks a keyword form's operator up on the
 * search_path (a person's `public.<=` on their own type is an exact match that wins over the
 * built-in `anyenum` one), and the resolve step judges every operator of that name in any schema.
 *
 * Source of truth: PostgreSQL's parse_expr.c and parse_clause.c. Keyword forms the grammar turns
 * into a FuncCall (OVERLAPS, AT TIME ZONE, EXTRACT, POSITION, SUBSTRING, TRIM, OVERLAY, IS
 * NORMALIZED, LIKE ... ESCAPE's like_escape) name pg_catalog's function and are collected as calls;
 * what compares through a type's default operator class without a name (ORDER BY and GROUP BY
 * without USING, DISTINCT, set operations, GREATEST and LEAST, a window's RANGE offset) is the
 * catalog walk's (postgres-reach.ts), not a name.
 */

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/** What a kind or sublink type this module does not know may compare with: every comparison. */
const COMPARISONS: readonly string[] = ['=', '<>', '<', '>', '<=', '>='];

/**
 * transformAExprBetween: `a BETWEEN b AND c` is `a >= b AND a <= c`, NOT BETWEEN `a < b OR a > c`,
 * and SYMMETRIC the same pair over both orders of b and c. The grammar's name ("BETWEEN") is no
 * operator.
 */
const BETWEEN: ReadonlyMap<string, readonly string[]> = new Map([
  ['AEXPR_BETWEEN', ['>=', '<=']],
  ['AEXPR_BETWEEN_SYM', ['>=', '<=']],
  ['AEXPR_NOT_BETWEEN', ['<', '>']],
  ['AEXPR_NOT_BETWEEN_SYM', ['<', '>']],
]);

/**
 * The A_Expr kinds whose name is the operator looked up (PostgreSQL 17's parsenodes.h): an
 * operator, `op ANY/ALL (array)`, IS [NOT] DISTINCT FROM and NULLIF (`=`), [NOT] IN a list (`=` or
 * `<>`), [NOT] LIKE (`~~`, `!~~`), [NOT] ILIKE (`~~*`, `!~~*`), [NOT] SIMILAR TO (`~`, `!~`).
 */
const NAMED_KINDS: ReadonlySet<string> = new Set([
  'AEXPR_OP',
  'AEXPR_OP_ANY',
  'AEXPR_OP_ALL',
  'AEXPR_DISTINCT',
  'AEXPR_NOT_DISTINCT',
  'AEXPR_NULLIF',
  'AEXPR_IN',
  'AEXPR_LIKE',
  'AEXPR_ILIKE',
  'AEXPR_SIMILAR',
]);

/**
 * The SubLink types of primnodes.h. ANY (`x IN (SELECT ...)`, whose operName is empty: the server
 * uses `=`; NOT IN is NOT over it), ALL and ROWCOMPARE compare with their operator; the others
 * compare nothing.
 */
const COMPARING_SUBLINKS: ReadonlySet<string> = new Set(['ANY_SUBLINK', 'ALL_SUBLINK', 'ROWCOMPARE_SUBLINK']);
const PLAIN_SUBLINKS: ReadonlySet<string> = new Set([
  'EXISTS_SUBLINK',
  'EXPR_SUBLINK',
  'MULTIEXPR_SUBLINK',
  'ARRAY_SUBLINK',
  'CTE_SUBLINK',
]);

/** The String values of a name list, as folded. */
function strings(list: unknown): string[] {
  const out: string[] = [];
  for (const item of Array.isArray(list) ? list : []) {
    const value = isNode(item) && isNode(item.String) ? item.String.sval : undefined;
    if (typeof value === 'string') out.push(value);
  }
  return out;
}

/** The unqualified name of an operator name list (`OPERATOR(s.<)` is `<`), as a list of none or one. */
const lastOf = (list: unknown): string[] => strings(list).slice(-1);

/** The nodes operatorNames reads, by the key the parse tree wraps them in. */
export const OPERATOR_NODE_KEYS: readonly string[] = ['A_Expr', 'SubLink', 'SortBy', 'CaseExpr', 'JoinExpr', 'Constraint'];

/**
 * The names of the operators the server looks up for the node `key` (one of OPERATOR_NODE_KEYS),
 * unqualified; none for a node that looks up none.
 */
export function operatorNames(key: string, node: Node): string[] {
  switch (key) {
    case 'A_Expr': {
      const kind = String(node.kind);
      const between = BETWEEN.get(kind);
      if (between) return [...between];
      const named = lastOf(node.name);
      return NAMED_KINDS.has(kind) ? named : [...named, ...COMPARISONS];
    }
    case 'SubLink': {
      const type = String(node.subLinkType);
      if (PLAIN_SUBLINKS.has(type)) return [];
      const named = lastOf(node.operName);
      return COMPARING_SUBLINKS.has(type) ? (named.length > 0 ? named : ['=']) : [...named, ...COMPARISONS];
    }
    // ORDER BY x USING op, in a query, a window or an aggregate's arguments.
    case 'SortBy':
      return lastOf(node.useOp);
    // transformCaseExpr: CASE x WHEN y compares x = y.
    case 'CaseExpr':
      return node.arg !== undefined ? ['='] : [];
    // transformJoinUsingClause: JOIN ... USING (c) and NATURAL JOIN compare the shared columns with `=`.
    case 'JoinExpr':
      return node.isNatural === true || (Array.isArray(node.usingClause) && node.usingClause.length > 0) ? ['='] : [];
    // EXCLUDE USING gist (c WITH &&): the index build and every later write call the operators it names.
    case 'Constraint':
      return node.contype === 'CONSTR_EXCLUSION' ? exclusionOperators(node.exclusions) : [];
    default:
      return [];
  }
}

/** The operators of an exclusion constraint's `(element, operator name list)` pairs. */
function exclusionOperators(exclusions: unknown): string[] {
  const out: string[] = [];
  for (const pair of Array.isArray(exclusions) ? exclusions : []) {
    const items = isNode(pair) && isNode(pair.List) && Array.isArray(pair.List.items) ? pair.List.items : [];
    const operator = items[1];
    if (isNode(operator) && isNode(operator.List)) out.push(...lastOf(operator.List.items));
  }
  return out;
}
