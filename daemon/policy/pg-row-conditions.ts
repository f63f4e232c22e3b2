/**
 * The parts of a statement's conditions that PostgreSQL may run on rows a row-security policy or a
 * security_barrier view hides.
 *
 * Source of truth: PostgreSQL's contain_leaked_vars_walker (src/backend/optimizer/util/clauses.c)
 * and order_qual_clauses (createplan.c). The planner lets a caller's condition run before the
 * policy's own filter when no function in it that is not LEAKPROOF has a column of the row among
 * its arguments: a call on no column (`has_table_privilege('nope', 'select')`,
 * `current_setting('x')`, `nextval('s')`, `now() - interval '9999 years'`) does not count, however
 * the condition around it chooses whether it runs (CASE, AND, OR, the cost order of a list of
 * conditions). Its error, side effect or time then tells hidden rows apart. Only a column of the
 * query level itself counts (contain_var_clause): one of an outer query, in a subquery, is a
 * constant there.
 *
 * Such a call is a site (ConditionSite): the outermost call of an expression with no column of its
 * level, in a condition (WHERE, JOIN ... ON, HAVING, MERGE's ON and WHEN) of any query level, or in
 * the select list of a subquery, a CTE or a sublink (the planner pushes an outer condition on such
 * a column down into the subquery's scan with the expression in place of the column). The select
 * list of the statement itself, its ORDER BY, GROUP BY and window run on the rows the filter kept.
 * What each site calls is judged against the catalog where the statement runs
 * (postgres-row-conditions.ts in the engine); a site in a form whose functions the server chooses
 * without a name here (GREATEST, XML and JSON forms) is named as `opaque`.
 *
 * The condition is read as the planner will see it at the scan: a column of a subquery, CTE or
 * VALUES in FROM is the expression that defines it (pull_up_subqueries, prepjointree.c), and an
 * EXISTS, scalar, ARRAY or row sub-select that reads no column of its level is an init plan whose
 * Param counts as leakproof and runs when first reached (make_subplan, subselect.c), a site of its
 * own; IN, ANY and ALL become a join or a SubPlan, which contain_leaked_vars counts as leaky.
 */

import { isNode, type Node, walkTree } from './pg-tree.js';

/** One call on no column of its query level, in a condition. */
export interface ConditionSite {
  /** How the call reads in a refusal: `has_table_privilege()`, `operator -`, `cast to regclass`. */
  readonly shown: string;
  /** Functions it calls (its own and those in its arguments), unqualified, as folded. */
  readonly functions: readonly string[];
  /** Operators it uses, unqualified. */
  readonly operators: readonly string[];
  /** Types it casts to, unqualified, as folded. */
  readonly types: readonly string[];
  /**
   * Every value it starts from is a constant or a parameter: when every function in it is
   * IMMUTABLE the planner computes it once before any row is read (eval_const_expressions), so an
   * error it raises is raised whatever the rows.
   */
  readonly constant: boolean;
  /** Every value it starts from is a number written as such (`100 * 1.2`): its operators are those of numeric types. */
  readonly numeric: boolean;
  /**
   * In a subquery, the unqualified column names it holds, taken as an outer query's; with
   * `relations`, the tables its level reads (every one a table named plainly, no CTE): when each
   * name is a column of one of them, the server reads it as the level's own, and the site is none
   * (the same condition read with those names as columns gives the sites that remain).
   */
  readonly columns?: readonly string[];
  readonly relations?: readonly string[];
  /**
   * With `relations`, how many of each one's first columns its FROM alias list renames
   * (`orders AS o(a, b)`): a name among those is no longer one of its columns.
   */
  readonly renamed?: readonly number[];
  /**
   * The site is a sub-select that reads no column of the condition's level (EXISTS, a scalar, ARRAY
   * or row sub-select): the planner makes it an init plan whose value counts as leakproof, run when
   * the condition first needs it, which may be on a hidden row (make_subplan, subselect.c), so any
   * error or time of anything in it tells that row apart.
   */
  readonly subquery?: boolean;
  /**
   * The site as read with the level's columns of relations named in FROM taken as columns of views
   * whose definition holds no column of the row (a view is pulled up like a subquery, its column
   * replaced by that definition): each `[relation, column, position in the FROM alias list or 0]`,
   * or `[function(), column, -1]` for a function called in FROM.
   * The site is none when any of them is a column of a table or a plain column of a view (the
   * reading with them as columns holds the sites that remain then).
   */
  readonly views?: readonly (readonly [string, string, number])[];
  /** With `views`: the site is a view's column itself, whose definition may call anything. */
  readonly viewColumn?: boolean;
}

/** The sites of a statement, and the first form with no readable function (`opaque`), if any. */
export interface ConditionScan {
  readonly sites: ConditionSite[];
  opaque?: string;
}

/** How deep an expression is read before the whole statement is judged as one it cannot read. */
const MAX_DEPTH = 1000;

interface Level {
  /** The names the level's FROM gives its rows (aliases, else relation names), as folded. */
  readonly names: ReadonlySet<string>;
  /** The level may read columns of an outer query (it is in a sublink or a LATERAL subquery). */
  readonly nested: boolean;
  /** The tables the level reads, as regclass text, when its FROM names only tables (no subquery, function or CTE). */
  readonly relations?: readonly string[];
  /** With `relations`, how many of each one's first columns its alias list renames. */
  readonly renamed?: readonly number[];
  /** Read an unqualified column name as the level's own (the second reading of a nested level's condition). */
  readonly own?: boolean;
  /** The FROM items whose columns the planner may replace by their defining expressions, by the name the level gives them. */
  readonly sources: ReadonlyMap<string, Source>;
  /** Column names a FROM alias list of the level gives: an unqualified one is the level's own. */
  readonly aliased: ReadonlySet<string>;
  /** The relations (tables or views) the level's FROM names, by the name it gives them ('' for all). */
  readonly tables: ReadonlyMap<string, readonly Named[]>;
}

/**
 * A relation a FROM item names (a table or a view), as regclass text, with its alias list; or a
 * function it calls (`relation` empty, `function` its name), which the planner inlines when it is
 * a set-returning SQL function (inline_set_returning_function) and then pulls up like a subquery.
 */
interface Named {
  readonly relation: string;
  readonly function?: string;
  readonly colnames: readonly string[];
}

/**
 * A FROM item whose columns are expressions of a query: a subquery, a CTE, VALUES, or a join of
 * such. The planner pulls a simple one up into the level (pull_up_subqueries, prepjointree.c;
 * a CTE read once is inlined first, PostgreSQL 12+), and each of its columns in a condition
 * becomes the expression that defines it, which is then judged as if written there.
 */
interface Source {
  /** The query and the alias list over its columns, or the items of a join. */
  readonly body?: Node;
  readonly colnames?: readonly string[];
  readonly nested: boolean;
  readonly items?: readonly Source[];
  /** A recursive CTE: read as a work table, never inlined, so its columns are plain columns. */
  readonly plain?: boolean;
}

/** What one column of a source is: plain columns of tables (`var`), expressions, or not known here. */
type Definition = 'var' | 'unknown' | readonly { readonly expr: unknown; readonly level: Level }[];

interface Context {
  readonly nested: boolean;
  /** The level's select list may be pushed into a condition (a subquery, a CTE, a sublink). */
  readonly inner: boolean;
}

/** What one expression holds, bottom-up. */
interface Info {
  /** A column of its own level is in it. */
  vars: boolean;
  /** Every value it starts from is a constant or a parameter. */
  constant: boolean;
  /** Every value it starts from is a number written as such. */
  numeric?: boolean;
  /** Unqualified column names in it taken as an outer query's. */
  columns?: Set<string>;
  /** The calls in it when it holds no column of its level (a site in the making). */
  pending?: Pending;
}

interface Pending {
  shown: string;
  functions: Set<string>;
  operators: Set<string>;
  types: Set<string>;
  constant: boolean;
  numeric: boolean;
  columns: Set<string>;
  /** Columns of relations named in FROM it reads, as JSON `[relation, column, position]`, in the reading that takes them as views'. */
  pairs: Set<string>;
  /** It holds a view's column read as its definition. */
  column: boolean;
}

function strings(list: unknown): string[] {
  const out: string[] = [];
  for (const item of Array.isArray(list) ? list : []) {
    const value = isNode(item) && isNode(item.String) ? item.String.sval : undefined;
    if (typeof value === 'string') out.push(value);
  }
  return out;
}

/** The sites of every statement of a parse tree's `stmts`. */
export function conditionSites(stmts: readonly unknown[], operatorNames: (key: string, node: Node) => string[]): ConditionScan {
  const scan: ConditionScan = { sites: [] };
  const ctes = new Map<string, Node[]>();
  cteNames(stmts, ctes);
  const reader = new Reader(scan, operatorNames, ctes);
  for (const raw of stmts) reader.visit(isNode(raw) ? raw.stmt : undefined, { nested: false, inner: false }, 0);
  return scan;
}

class Reader {
  readonly #scan: ConditionScan;
  readonly #operators: (key: string, node: Node) => string[];
  readonly #ctes: ReadonlyMap<string, readonly Node[]>;
  /** The query bodies whose columns are being looked up (a recursive CTE reads its own). */
  readonly #open = new Set<unknown>();
  /** What each defining expression read in place of a column holds (read once however often it is named). */
  readonly #defined = new Map<unknown, Info>();
  /** The reading that takes columns of relations named in FROM as views' columns defined with no column of the row. */
  #views = false;
  readonly #definedAsViews = new Map<unknown, Info>();
  /** The second reading of a condition: the statements and sublinks in it were visited by the first. */
  #quiet = false;
  /** The level of the expression being read (for the sites a column's neighbour flushes). */
  #level: Level | undefined;

  constructor(scan: ConditionScan, operators: (key: string, node: Node) => string[], ctes: ReadonlyMap<string, readonly Node[]>) {
    this.#scan = scan;
    this.#operators = operators;
    this.#ctes = ctes;
  }

  #tooDeep(depth: number): boolean {
    if (depth <= MAX_DEPTH) return false;
    this.#scan.opaque ??= 'an expression nested too deeply to read';
    return true;
  }

  /** Any part of a tree that is no condition: finds the statements and sublinks in it. */
  visit(value: unknown, context: Context, depth: number): void {
    if (this.#tooDeep(depth)) return;
    if (Array.isArray(value)) {
      for (const item of value) this.visit(item, context, depth + 1);
      return;
    }
    if (!isNode(value)) return;
    for (const key in value) {
      const child = value[key];
      if (!isNode(child)) continue;
      if (key === 'SelectStmt') this.#select(child, context, depth + 1);
      else if (key === 'UpdateStmt' || key === 'DeleteStmt' || key === 'MergeStmt') this.#write(key, child, context, depth + 1);
      else if (key === 'SubLink') {
        this.visit(child.testexpr, context, depth + 1);
        this.visit(child.subselect, { nested: true, inner: true }, depth + 1);
      } else if (key === 'RangeSubselect')
        this.visit(child.subquery, { nested: context.nested || child.lateral === true, inner: true }, depth + 1);
      else if (key === 'CommonTableExpr') this.visit(child.ctequery, { nested: context.nested, inner: true }, depth + 1);
      else this.visit(child, context, depth + 1);
    }
  }

  #select(body: Node, context: Context, depth: number): void {
    if (this.#tooDeep(depth)) return;
    const level = this.#levelOf(body.fromClause, context.nested);
    for (const key in body) {
      const child = body[key];
      if (key === 'larg' || key === 'rarg') {
        if (isNode(child)) this.#select(child, context, depth + 1);
      } else if (key === 'whereClause' || key === 'havingClause') this.condition(child, level, depth + 1);
      else if (key === 'fromClause') this.#from(child, level, context, depth + 1);
      else if (key === 'targetList' && context.inner) {
        for (const item of Array.isArray(child) ? child : [])
          if (isNode(item) && isNode(item.ResTarget)) this.condition(item.ResTarget.val, level, depth + 1);
      } else this.visit(child, context, depth + 1);
    }
  }

  /** The level of a query whose FROM list is `from` (and, for a write, whose target is `target`). */
  #levelOf(from: unknown, nested: boolean, target?: unknown): Level {
    const items = [...(target === undefined ? [] : [{ RangeVar: target }]), ...(Array.isArray(from) ? from : [])];
    const names = new Set<string>();
    fromNames(items, names);
    const aliased = new Set<string>();
    aliasColumns(items, aliased);
    const tables = plainTables(items, this.#ctes);
    return {
      names,
      nested,
      aliased,
      tables: namedRelations(items, this.#ctes),
      sources: this.#sources(items, nested),
      ...(tables ? { relations: tables.relations, ...(tables.renamed.some((count) => count > 0) ? { renamed: tables.renamed } : {}) } : {}),
    };
  }

  /** The FROM items of a list whose columns are defined by expressions (subqueries, CTEs, VALUES, joins of them), by name. */
  #sources(items: unknown, nested: boolean): Map<string, Source> {
    const out = new Map<string, Source>();
    const add = (item: unknown): Source | undefined => {
      if (!isNode(item)) return undefined;
      if (isNode(item.RangeSubselect)) {
        const range = item.RangeSubselect;
        const alias = aliasOf(range);
        const source: Source = {
          body: selectBody(range.subquery),
          colnames: alias?.colnames ?? [],
          nested: nested || range.lateral === true,
        };
        if (alias) out.set(alias.name, source);
        return source;
      }
      if (isNode(item.RangeVar)) {
        const range = item.RangeVar;
        const ctes = range.schemaname === undefined && typeof range.relname === 'string' ? this.#ctes.get(range.relname) : undefined;
        if (!ctes || typeof range.relname !== 'string') return undefined;
        const alias = aliasOf(range);
        // The alias list renames the first columns of the CTE's, which its own list names first.
        const items = ctes.map((cte): Source => {
          const own = strings(cte.aliascolnames);
          const colnames = [...(alias?.colnames ?? [])];
          for (let i = colnames.length; i < own.length; i++) colnames.push(own[i] as string);
          return { body: selectBody(cte.ctequery), colnames, nested, ...(readsItself(cte) ? { plain: true } : {}) };
        });
        const source: Source = { items, nested };
        out.set(alias?.name ?? range.relname, source);
        return source;
      }
      if (isNode(item.JoinExpr)) {
        const join = item.JoinExpr;
        const inner = [add(join.larg), add(join.rarg)].filter((part): part is Source => part !== undefined);
        const alias = aliasOf(join);
        const source: Source = { items: inner, colnames: alias?.colnames ?? [], nested };
        if (alias && inner.length > 0) out.set(alias.name, source);
        return inner.length > 0 ? source : undefined;
      }
      return undefined;
    };
    const all: Source[] = [];
    for (const item of Array.isArray(items) ? items : []) {
      const source = add(item);
      if (source) all.push(source);
    }
    if (all.length > 0) out.set('', { items: all, nested });
    return out;
  }

  /** What the column `name` of `source` is, or undefined when it has no column of that name. */
  #lookup(source: Source, name: string, depth: number): Definition | undefined {
    if (depth > MAX_DEPTH) return 'unknown';
    if (source.items) {
      // A join's alias list renames columns whose order the join sets.
      if (source.colnames?.includes(name)) return 'unknown';
      return merge(source.items.map((item) => this.#lookup(item, name, depth + 1)));
    }
    if (source.plain) return 'var';
    const body = source.body;
    if (!body) return 'unknown';
    // A recursive CTE's reference to itself reads its work table, never inlined: a plain column.
    if (this.#open.has(body)) return 'var';
    this.#open.add(body);
    try {
      const columns = this.#columns(body, source.nested, depth + 1);
      if (!columns) return 'unknown';
      const colnames = source.colnames ?? [];
      const star = columns.findIndex((column) => column.star !== undefined);
      const at = colnames.indexOf(name);
      if (at >= 0) {
        if (star >= 0 && star <= at) return 'unknown';
        return columns[at]?.definition ?? 'unknown';
      }
      const found: (Definition | undefined)[] = [];
      columns.forEach((column, i) => {
        if (column.star) found.push(merge(column.star.map((inner) => (inner === 'table' ? 'var' : this.#lookup(inner, name, depth + 1)))));
        else if (i >= colnames.length && column.name === name) found.push(column.definition);
      });
      return merge(found);
    } finally {
      this.#open.delete(body);
    }
  }

  /** The output columns of a query body, in order, or undefined when they cannot be read here. */
  #columns(body: Node, nested: boolean, depth: number): Column[] | undefined {
    if (depth > MAX_DEPTH) return undefined;
    if (body.op !== undefined && body.op !== 'SETOP_NONE') {
      const left = isNode(body.larg) ? this.#columns(body.larg, nested, depth + 1) : undefined;
      const right = isNode(body.rarg) ? this.#columns(body.rarg, nested, depth + 1) : undefined;
      if (!left || !right || left.length !== right.length || [...left, ...right].some((column) => column.star)) return undefined;
      return left.map((column, i) => ({ name: column.name, definition: merge([column.definition, right[i]?.definition]) }));
    }
    if (Array.isArray(body.valuesLists)) {
      const level = this.#levelOf([], nested);
      const columns: Column[] = [];
      for (const row of body.valuesLists) {
        const items = isNode(row) && isNode(row.List) && Array.isArray(row.List.items) ? row.List.items : [];
        items.forEach((expr, i) => {
          const column = (columns[i] ??= { name: `column${i + 1}`, definition: [] });
          column.definition = [...(column.definition as readonly Defined[]), { expr, level }];
        });
      }
      return columns;
    }
    const level = this.#levelOf(body.fromClause, nested);
    const columns: Column[] = [];
    for (const item of Array.isArray(body.targetList) ? body.targetList : []) {
      const target = isNode(item) && isNode(item.ResTarget) ? item.ResTarget : undefined;
      if (!target) continue;
      const ref = isNode(target.val) && isNode(target.val.ColumnRef) ? target.val.ColumnRef : undefined;
      const fields = ref && Array.isArray(ref.fields) ? ref.fields : [];
      if (fields.some((field) => isNode(field) && field.A_Star !== undefined)) {
        const qualifier = strings(fields).at(-1);
        const inner = qualifier === undefined ? level.sources.get('') : level.sources.get(qualifier);
        // A star over a table gives its plain columns; over a subquery, its columns as defined there.
        columns.push({ star: [...(inner ? [inner] : []), 'table'] });
      } else {
        const name = typeof target.name === 'string' ? target.name : columnName(target.val);
        columns.push({ name, definition: [{ expr: target.val, level }] });
      }
    }
    return columns;
  }

  /**
   * A column reference of `level` that names a column of a subquery, CTE or VALUES of its FROM:
   * what the expressions that define it hold, read as if written in its place (the planner puts
   * them there when it pulls the subquery up); undefined when it names a table's column.
   */
  #resolve(ref: Node, level: Level, depth: number): Info | undefined {
    if (level.sources.size === 0) return undefined;
    const fields = Array.isArray(ref.fields) ? ref.fields : [];
    const names = strings(fields);
    const star = fields.some((field) => isNode(field) && field.A_Star !== undefined);
    let definition: Definition | undefined;
    if (star) {
      // A whole row of a subquery becomes a row of its expressions.
      const source = names.length > 0 ? level.sources.get(names.at(-1) as string) : undefined;
      if (!source) return undefined;
      definition = 'unknown';
    } else if (names.length >= 2) {
      const source = level.sources.get(names.at(-2) as string);
      definition = source ? this.#lookup(source, names.at(-1) as string, depth + 1) : undefined;
    } else if (names.length === 1) {
      const all = level.sources.get('');
      definition = all ? this.#lookup(all, names[0] as string, depth + 1) : undefined;
    }
    if (definition === undefined || definition === 'var') return undefined;
    if (definition === 'unknown') return { vars: false, constant: false };
    // Each expression that may define the column is judged; the column counts as holding a column of the row only if all do.
    const infos = definition.map((defined) => this.#defined1(defined, depth + 1));
    this.#level = level;
    const withVars = infos.filter((info) => info.vars);
    if (withVars.length === infos.length) return this.#combine(infos);
    for (const info of withVars) this.#flush(info);
    const info = this.#combine(infos.filter((part) => !part.vars));
    return { vars: false, constant: info.constant, ...(info.pending ? { pending: info.pending } : {}) };
  }

  /** What one defining expression holds, read at its own level; its sites and sub-selects are found where it is written. */
  #defined1(defined: Defined, depth: number): Info {
    const memo = this.#views ? this.#definedAsViews : this.#defined;
    let info = memo.get(defined.expr);
    if (!info) {
      const quiet = this.#quiet;
      this.#quiet = true;
      try {
        info = this.#expression(defined.expr, defined.level, depth + 1);
      } finally {
        this.#quiet = quiet;
      }
      // Names taken as an outer query's there are not this level's: the site stands whatever they name.
      if (info.pending) info.pending.columns = new Set();
      info = { vars: info.vars, constant: info.constant, ...(info.pending ? { pending: info.pending } : {}) };
      memo.set(defined.expr, info);
    }
    const pending = info.pending;
    return {
      vars: info.vars,
      constant: info.constant,
      ...(pending
        ? {
            pending: {
              ...pending,
              functions: new Set(pending.functions),
              operators: new Set(pending.operators),
              types: new Set(pending.types),
              columns: new Set(),
              pairs: new Set(pending.pairs),
            },
          }
        : {}),
    };
  }

  #write(key: string, body: Node, context: Context, depth: number): void {
    const from = key === 'DeleteStmt' ? body.usingClause : key === 'MergeStmt' ? [body.sourceRelation] : body.fromClause;
    const level: Level = { ...this.#levelOf(from, context.nested, body.relation), relations: undefined, renamed: undefined };
    for (const field in body) {
      const child = body[field];
      if (field === 'whereClause' || field === 'joinCondition') this.condition(child, level, depth + 1);
      else if (field === 'mergeWhenClauses') {
        for (const item of Array.isArray(child) ? child : []) {
          const clause = isNode(item) && isNode(item.MergeWhenClause) ? item.MergeWhenClause : undefined;
          if (clause) this.condition(clause.condition, level, depth + 1);
          this.visit(item, context, depth + 1);
        }
      } else if (field === 'fromClause' || field === 'usingClause') this.#from(child, level, context, depth + 1);
      else if (field === 'sourceRelation') this.#from([child], level, context, depth + 1);
      else this.visit(child, context, depth + 1);
    }
  }

  /** A FROM list: the ON condition of each join, and what each item holds. */
  #from(items: unknown, level: Level, context: Context, depth: number): void {
    if (this.#tooDeep(depth)) return;
    for (const item of Array.isArray(items) ? items : []) {
      if (!isNode(item)) continue;
      const join = isNode(item.JoinExpr) ? item.JoinExpr : undefined;
      if (join) {
        this.#from([join.larg, join.rarg], level, context, depth + 1);
        this.condition(join.quals, level, depth + 1);
      } else this.visit(item, context, depth + 1);
    }
  }

  /** A condition of `level`: records each site in it. */
  condition(expression: unknown, level: Level, depth: number): void {
    if (expression === undefined) return;
    this.#flush(this.#expression(expression, level, depth), level);
    if (this.#quiet || this.#views) return;
    if (level.tables.size > 0) {
      // Read again with the columns of relations it names as views' columns defined on no column of the row.
      this.#quiet = true;
      this.#views = true;
      try {
        this.#flush(this.#expression(expression, level, depth), level);
      } finally {
        this.#quiet = false;
        this.#views = false;
      }
    }
    if (!level.nested || !level.relations) return;
    // Read again with unqualified names as the level's own: the sites that remain if they are.
    this.#quiet = true;
    try {
      this.#flush(this.#expression(expression, { ...level, own: true }, depth), level);
    } finally {
      this.#quiet = false;
    }
  }

  #flush(info: Info, level = this.#level): void {
    const pending = info.pending;
    if (!pending) return;
    const columns = [...pending.columns];
    const relations = level?.relations;
    this.#scan.sites.push({
      shown: pending.shown,
      functions: [...pending.functions],
      operators: [...pending.operators],
      types: [...pending.types],
      constant: pending.constant,
      numeric: pending.numeric,
      ...(columns.length > 0 && relations && !level?.own && !this.#views
        ? { columns, relations, ...(level?.renamed ? { renamed: level.renamed } : {}) }
        : {}),
      ...(pending.pairs.size > 0
        ? {
            views: [...pending.pairs].map((pair) => JSON.parse(pair) as [string, string, number]),
            ...(pending.column ? { viewColumn: true } : {}),
          }
        : {}),
    });
    info.pending = undefined;
  }

  /** Combines the parts of one node: a part with no column whose neighbour has one is a site of its own. */
  #combine(parts: Info[]): Info {
    const vars = parts.some((part) => part.vars);
    const constant = parts.every((part) => part.constant);
    const numeric = parts.every((part) => part.numeric === true);
    if (vars) {
      for (const part of parts) this.#flush(part);
      return { vars, constant };
    }
    const columns = new Set<string>();
    for (const part of parts) for (const name of part.columns ?? []) columns.add(name);
    let pending: Pending | undefined;
    for (const part of parts) {
      if (!part.pending) continue;
      if (!pending)
        pending = { ...part.pending, functions: new Set(), operators: new Set(), types: new Set(), columns: new Set(), pairs: new Set() };
      for (const pair of part.pending.pairs) pending.pairs.add(pair);
      pending.column ||= part.pending.column;
      for (const name of part.pending.functions) pending.functions.add(name);
      for (const name of part.pending.operators) pending.operators.add(name);
      for (const name of part.pending.types) pending.types.add(name);
      pending.constant &&= part.pending.constant;
      pending.numeric &&= part.pending.numeric;
    }
    if (pending) for (const name of columns) pending.columns.add(name);
    return pending ? { vars, constant, numeric, columns, pending } : { vars, constant, numeric, columns };
  }

  /** A call node: `parts` its arguments, the names it calls itself. */
  #call(parts: Info[], shown: string, own: { functions?: string[]; operators?: string[]; types?: string[] }): Info {
    const info = this.#combine(parts);
    if (info.vars) return info;
    const numeric = info.numeric === true && (own.functions ?? []).length === 0 && (own.types ?? []).length === 0;
    const pending: Pending = info.pending ?? {
      shown,
      functions: new Set(),
      operators: new Set(),
      types: new Set(),
      constant: info.constant,
      numeric,
      columns: new Set(info.columns),
      pairs: new Set(),
      column: false,
    };
    pending.shown = shown;
    pending.constant = info.constant;
    pending.numeric = numeric;
    for (const name of own.functions ?? []) pending.functions.add(name);
    for (const name of own.operators ?? []) pending.operators.add(name);
    for (const name of own.types ?? []) pending.types.add(name);
    return { vars: false, constant: info.constant, numeric, ...(info.columns ? { columns: info.columns } : {}), pending };
  }

  #list(values: unknown[], level: Level, depth: number): Info[] {
    return values.map((value) => this.#expression(value, level, depth + 1));
  }

  #expression(value: unknown, level: Level, depth: number): Info {
    this.#level = level;
    if (this.#tooDeep(depth)) return { vars: false, constant: false };
    if (Array.isArray(value)) return this.#combine(this.#list(value, level, depth));
    if (!isNode(value)) return { vars: false, constant: true, numeric: true };
    const [kind, raw] = Object.entries(value)[0] ?? [];
    const body = isNode(raw) ? raw : {};
    const parts = (...fields: unknown[]): Info[] => this.#list(fields, level, depth);
    switch (kind) {
      case 'A_Const':
        return { vars: false, constant: true, numeric: 'ival' in body || 'fval' in body };
      case 'ParamRef':
        return { vars: false, constant: true };
      case 'SQLValueFunction':
        return { vars: false, constant: false };
      case 'ColumnRef': {
        const defined = this.#resolve(body, level, depth);
        if (defined) return defined;
        const fields = Array.isArray(body.fields) ? body.fields : [];
        const bare = fields.length === 1 ? strings(fields)[0] : undefined;
        const view = this.#views ? viewColumn(body, level) : undefined;
        if (view) return view;
        if (bare !== undefined && level.nested && (level.own || level.aliased.has(bare))) return { vars: true, constant: false };
        const vars = isColumnOf(body, level);
        return vars || bare === undefined ? { vars, constant: false } : { vars, constant: false, columns: new Set([bare]) };
      }
      case 'SubLink': {
        if (!this.#quiet) this.visit(body.subselect, { nested: true, inner: true }, depth + 1);
        this.#level = level;
        // EXISTS, a scalar, ARRAY or row sub-select that reads no column of the level is an init
        // plan; IN, ANY and ALL become a join or a SubPlan, which counts as leaky and runs after the filter.
        if (body.subLinkType !== 'ANY_SUBLINK' && body.subLinkType !== 'ALL_SUBLINK' && !correlated(body.subselect, level.names))
          this.#scan.sites.push({
            shown: 'a sub-select',
            functions: [],
            operators: [],
            types: [],
            constant: false,
            numeric: false,
            subquery: true,
          });
        const test = parts(body.testexpr);
        const operators = this.#operators('SubLink', body);
        const leaf: Info = { vars: false, constant: false };
        return operators.length > 0
          ? this.#call([...test, leaf], `operator ${operators[0]}`, { operators })
          : this.#combine([...test, leaf]);
      }
      case 'TypeCast': {
        const arg = isNode(body.arg) ? body.arg : {};
        const literal = isNode(arg.A_Const) && !('ival' in arg.A_Const) && !('fval' in arg.A_Const);
        // A string literal or a parameter is read as the type itself when the statement is parsed.
        if (literal || isNode(arg.ParamRef)) return { vars: false, constant: true };
        const type = isNode(body.typeName) ? strings(body.typeName.names).at(-1) : undefined;
        return this.#call(parts(body.arg), `cast to ${type ?? 'a type'}`, { types: type ? [type] : [] });
      }
      case 'FuncCall': {
        const name = strings(body.funcname).at(-1) ?? '';
        const inner = parts(body.args, body.agg_order, body.agg_filter, body.over);
        // count(*), an aggregate's DISTINCT, ORDER BY or FILTER, a window: it runs on the rows the filter kept.
        if (
          body.agg_star === true ||
          body.agg_distinct === true ||
          body.agg_order !== undefined ||
          body.agg_filter !== undefined ||
          body.over !== undefined
        )
          return this.#combine([...inner, { vars: true, constant: false }]);
        return this.#call(inner, `${name}()`, { functions: [name] });
      }
      case 'A_Expr': {
        const operators = this.#operators('A_Expr', body);
        return this.#call(parts(body.lexpr, body.rexpr), `operator ${operators[0] ?? String(body.kind)}`, { operators });
      }
      case 'CaseExpr': {
        if (body.arg === undefined) return this.#combine(parts(body.args, body.defresult));
        // CASE x WHEN v: each arm compares x = v.
        const arg = this.#expression(body.arg, level, depth + 1);
        const arms: Info[] = [];
        for (const item of Array.isArray(body.args) ? body.args : []) {
          const when = isNode(item) && isNode(item.CaseWhen) ? item.CaseWhen : {};
          const compared = this.#expression(when.expr, level, depth + 1);
          arms.push(this.#call([{ ...arg, pending: undefined }, compared], 'operator =', { operators: ['='] }));
          arms.push(this.#expression(when.result, level, depth + 1));
        }
        return this.#combine([arg, ...arms, ...parts(body.defresult)]);
      }
      case 'A_Indirection': {
        // (x).name calls name(x) where x has no column of that name.
        const fields = strings(body.indirection);
        const inner = parts(body.arg, body.indirection);
        return fields.length > 0 ? this.#call(inner, `${fields[0]}()`, { functions: fields }) : this.#combine(inner);
      }
      case 'BoolExpr':
      case 'NullTest':
      case 'BooleanTest':
      case 'A_ArrayExpr':
      case 'RowExpr':
      case 'CollateClause':
      case 'CoalesceExpr':
      case 'CaseWhen':
      case 'NamedArgExpr':
      case 'ResTarget':
      case 'SortBy':
      case 'WindowDef':
      case 'A_Indices':
      case 'A_Star':
      case 'GroupingFunc':
      case 'SetToDefault':
      case 'List':
      case 'String':
        return this.#combine(this.#list(Object.values(body), level, depth));
      default: {
        // A form whose functions the server chooses without a name here: judged whole.
        const info = this.#combine(this.#list(Object.values(body), level, depth));
        // Taking columns as views' is a reading the catalog may set aside: what it holds stays a site in the making.
        if (this.#views) return info;
        if (!info.vars) this.#scan.opaque ??= describe(kind ?? 'an expression');
        return { vars: info.vars, constant: info.constant };
      }
    }
  }
}

/** How a form read as opaque is named: GREATEST, XML, JSON, or the parse node's name. */
function describe(kind: string): string {
  if (kind === 'MinMaxExpr') return 'GREATEST or LEAST';
  if (kind.startsWith('Xml')) return 'an XML form';
  if (kind.startsWith('Json')) return 'a JSON form';
  return kind;
}

/**
 * True when the column reference is a column of the level's own rows: any, where no outer query
 * is in reach; in a sublink or LATERAL subquery, only one qualified by a name of the level's FROM
 * (an unqualified name may be an outer query's column, which the server counts as a constant).
 */
function isColumnOf(ref: Node, level: Level): boolean {
  if (!level.nested) return true;
  const fields = Array.isArray(ref.fields) ? ref.fields : [];
  const names = strings(fields);
  const star = fields.some((field) => isNode(field) && field.A_Star !== undefined);
  const qualifier = star ? names.at(-1) : names.length >= 2 ? names.at(-2) : undefined;
  return qualifier !== undefined && level.names.has(qualifier);
}

/** The names a FROM list gives its rows, into `out`. */
function fromNames(items: unknown, out: Set<string>): void {
  for (const item of Array.isArray(items) ? items : []) {
    if (!isNode(item)) continue;
    for (const key in item) {
      const node = item[key];
      if (!isNode(node)) continue;
      const alias = isNode(node.alias) && typeof node.alias.aliasname === 'string' ? node.alias.aliasname : undefined;
      if (alias !== undefined) out.add(alias);
      if (key === 'RangeVar' && alias === undefined && typeof node.relname === 'string') out.add(node.relname);
      if (key === 'RangeFunction' && alias === undefined) {
        // FROM f(x) names its rows f.
        for (const entry of Array.isArray(node.functions) ? node.functions : []) {
          const call = isNode(entry) && isNode(entry.List) && Array.isArray(entry.List.items) ? entry.List.items[0] : undefined;
          const fn = isNode(call) && isNode(call.FuncCall) ? strings(call.FuncCall.funcname).at(-1) : undefined;
          if (fn !== undefined) out.add(fn);
        }
      }
      if (key === 'JoinExpr') fromNames([node.larg, node.rarg], out);
    }
  }
}

/** Every CTE anywhere in the tree by name, into `out`: a FROM item of that name may be the CTE rather than a table. */
function cteNames(tree: unknown, out: Map<string, Node[]>): void {
  walkTree(tree, MAX_DEPTH, (key, child) => {
    if (key !== 'CommonTableExpr' || typeof child.ctename !== 'string') return;
    const list = out.get(child.ctename) ?? [];
    list.push(child);
    out.set(child.ctename, list);
  });
}

/**
 * The tables a FROM list names as regclass text, with how many of each one's first columns its
 * alias list renames, when it names nothing else (no subquery, function, name a CTE has, or join
 * with an alias, which hides the names inside it).
 */
function plainTables(items: unknown, ctes: ReadonlyMap<string, unknown>): { relations: string[]; renamed: number[] } | undefined {
  const out: string[] = [];
  const renamed: number[] = [];
  const add = (item: unknown): boolean => {
    if (!isNode(item)) return false;
    if (isNode(item.JoinExpr)) return item.JoinExpr.alias === undefined && add(item.JoinExpr.larg) && add(item.JoinExpr.rarg);
    const range = isNode(item.RangeVar) ? item.RangeVar : undefined;
    if (!range || typeof range.relname !== 'string') return false;
    if (range.schemaname === undefined && ctes.has(range.relname)) return false;
    const parts = [range.catalogname, range.schemaname, range.relname].filter(
      (part): part is string => typeof part === 'string' && part !== '',
    );
    out.push(parts.map((part) => `"${part.replaceAll('"', '""')}"`).join('.'));
    renamed.push(aliasOf(range)?.colnames.length ?? 0);
    return true;
  };
  const list = Array.isArray(items) ? items : [];
  return list.length > 0 && list.every(add) ? { relations: out, renamed } : undefined;
}

/** The relations a FROM list names (tables or views; not a CTE's name), by the name it gives each, and all under ''. */
function namedRelations(items: unknown, ctes: ReadonlyMap<string, unknown>): Map<string, Named[]> {
  const out = new Map<string, Named[]>();
  const all: Named[] = [];
  const add = (item: unknown): Named[] => {
    if (!isNode(item)) return [];
    if (isNode(item.JoinExpr)) {
      const inner = [...add(item.JoinExpr.larg), ...add(item.JoinExpr.rarg)];
      const alias = aliasOf(item.JoinExpr);
      // A join's alias list renames columns whose order the join sets: those are not followed.
      if (alias && alias.colnames.length === 0) out.set(alias.name, inner);
      return inner;
    }
    if (isNode(item.RangeFunction)) {
      const alias = aliasOf(item.RangeFunction);
      const called: Named[] = [];
      for (const entry of Array.isArray(item.RangeFunction.functions) ? item.RangeFunction.functions : []) {
        const call = isNode(entry) && isNode(entry.List) && Array.isArray(entry.List.items) ? entry.List.items[0] : undefined;
        const name = isNode(call) && isNode(call.FuncCall) ? strings(call.FuncCall.funcname).at(-1) : undefined;
        if (name !== undefined) called.push({ relation: '', function: name, colnames: [] });
      }
      const first = called[0]?.function;
      const named = alias?.name ?? (called.length === 1 ? first : undefined);
      if (named !== undefined) out.set(named, called);
      all.push(...called);
      return called;
    }
    const range = isNode(item.RangeVar) ? item.RangeVar : undefined;
    if (!range || typeof range.relname !== 'string') return [];
    if (range.schemaname === undefined && ctes.has(range.relname)) return [];
    const parts = [range.catalogname, range.schemaname, range.relname].filter(
      (part): part is string => typeof part === 'string' && part !== '',
    );
    const alias = aliasOf(range);
    const named: Named = { relation: parts.map((part) => `"${part.replaceAll('"', '""')}"`).join('.'), colnames: alias?.colnames ?? [] };
    out.set(alias?.name ?? range.relname, [named]);
    all.push(named);
    return [named];
  };
  for (const item of Array.isArray(items) ? items : []) add(item);
  if (all.length > 0) out.set('', all);
  return out;
}

/**
 * In the reading that takes them as views' columns: a column of a relation the level names, as a
 * site in the making on no column of the row, with the relation and column it may be.
 */
function viewColumn(ref: Node, level: Level): Info | undefined {
  const fields = Array.isArray(ref.fields) ? ref.fields : [];
  const names = strings(fields);
  const name = names.at(-1);
  if (name === undefined) return undefined;
  const pairs = new Set<string>();
  if (fields.some((field) => isNode(field) && field.A_Star !== undefined)) {
    // A whole row (`v.*`) of a view becomes a row of its definitions: `*` stands for every column.
    for (const named of level.tables.get(name) ?? [])
      pairs.add(JSON.stringify([named.relation || `${named.function}()`, '*', named.function ? -1 : 0]));
  } else {
    // An unqualified name may be a column of any relation the level names (or, in a sublink, an
    // outer query's: none of them has it then, and the first reading holds that site), or a whole row.
    const candidates = level.tables.get(names.length >= 2 ? (names.at(-2) as string) : '') ?? [];
    for (const named of candidates)
      pairs.add(
        JSON.stringify(named.function ? [`${named.function}()`, name, -1] : [named.relation, name, named.colnames.indexOf(name) + 1]),
      );
    if (names.length === 1)
      for (const named of level.tables.get(name) ?? [])
        pairs.add(JSON.stringify([named.relation || `${named.function}()`, '*', named.function ? -1 : 0]));
  }
  if (pairs.size === 0) return undefined;
  const pending: Pending = {
    shown: `column ${name}`,
    functions: new Set(),
    operators: new Set(),
    types: new Set(),
    constant: false,
    numeric: false,
    columns: new Set(),
    pairs,
    column: true,
  };
  return { vars: false, constant: false, pending };
}

/** A FROM item's alias and its column list. */
function aliasOf(item: Node): { name: string; colnames: string[] } | undefined {
  const alias = isNode(item.alias) ? item.alias : undefined;
  return alias && typeof alias.aliasname === 'string' ? { name: alias.aliasname, colnames: strings(alias.colnames) } : undefined;
}

/** The column names the alias lists of a FROM list give, into `out`. */
function aliasColumns(items: unknown, out: Set<string>): void {
  for (const item of Array.isArray(items) ? items : []) {
    if (!isNode(item)) continue;
    for (const key in item) {
      const node = item[key];
      if (!isNode(node)) continue;
      for (const name of aliasOf(node)?.colnames ?? []) out.add(name);
      if (key === 'JoinExpr') aliasColumns([node.larg, node.rarg], out);
    }
  }
}

/** True when a CTE's query names the CTE itself (WITH RECURSIVE): PostgreSQL does not inline such a CTE. */
function readsItself(cte: Node): boolean {
  return walkTree(
    cte.ctequery,
    MAX_DEPTH,
    (key, child) => key === 'RangeVar' && child.schemaname === undefined && child.relname === cte.ctename,
  );
}

/** The query body of a subquery or CTE node (`{ SelectStmt: ... }`), if it is one. */
function selectBody(value: unknown): Node | undefined {
  return isNode(value) && isNode(value.SelectStmt) ? value.SelectStmt : undefined;
}

/** One output column of a query body: its name and what defines it, or a star over the sources it expands. */
interface Column {
  readonly name?: string;
  definition?: Definition;
  readonly star?: readonly (Source | 'table')[];
}

type Defined = { readonly expr: unknown; readonly level: Level };

/** What several possible definitions of one column together are: not known if any is not; every expression of those that are expressions. */
function merge(all: readonly (Definition | undefined)[]): Definition | undefined {
  if (all.includes('unknown')) return 'unknown';
  const exprs = all.filter((item): item is readonly Defined[] => Array.isArray(item)).flat();
  if (exprs.length > 0) return exprs;
  return all.includes('var') ? 'var' : undefined;
}

/** The name PostgreSQL gives a select-list item without AS (FigureColname, parse_target.c), as far as a reference can use it. */
function columnName(value: unknown): string {
  if (!isNode(value)) return '?column?';
  if (isNode(value.ColumnRef)) return strings(value.ColumnRef.fields).at(-1) ?? '?column?';
  if (isNode(value.FuncCall)) return strings(value.FuncCall.funcname).at(-1) ?? '?column?';
  if (isNode(value.TypeCast)) {
    const inner = columnName(value.TypeCast.arg);
    return inner !== '?column?'
      ? inner
      : ((isNode(value.TypeCast.typeName) ? strings(value.TypeCast.typeName.names).at(-1) : undefined) ?? '?column?');
  }
  if (isNode(value.A_Indirection)) return strings(value.A_Indirection.indirection).at(-1) ?? columnName(value.A_Indirection.arg);
  if (isNode(value.CaseExpr)) return 'case';
  if (isNode(value.SubLink))
    return value.SubLink.subLinkType === 'EXISTS_SUBLINK' ? 'exists' : value.SubLink.subLinkType === 'ARRAY_SUBLINK' ? 'array' : '?column?';
  return '?column?';
}

/**
 * True when a sub-select reads a column of the level whose FROM gives `names` (qualified by one of
 * them that no FROM inside it gives too): the planner then runs it per row, as a SubPlan, which
 * counts as leaky. An unqualified name is not counted: it may be the sub-select's own.
 */
function correlated(subselect: unknown, names: ReadonlySet<string>): boolean {
  const qualifiers = new Set<string>();
  const inner = new Set<string>();
  walkTree(subselect, MAX_DEPTH, (key, child) => {
    if (key === 'ColumnRef') {
      const fields = Array.isArray(child.fields) ? child.fields : [];
      const parts = strings(fields);
      const star = fields.some((field) => isNode(field) && field.A_Star !== undefined);
      const qualifier = star ? parts.at(-1) : parts.length >= 2 ? parts.at(-2) : undefined;
      if (qualifier !== undefined) qualifiers.add(qualifier);
    }
    if (key === 'fromClause' || key === 'usingClause') fromNames(child, inner);
    if (key === 'CommonTableExpr' && typeof child.ctename === 'string') inner.add(child.ctename);
  });
  return [...qualifiers].some((name) => names.has(name) && !inner.has(name));
}
