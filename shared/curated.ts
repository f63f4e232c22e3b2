import { z } from 'zod';
import { type Engine, engineSpec } from './engines.js';
import { HanactlError } from './errors.js';
import { ConnectionNameSchema } from './schemas.js';

/**
 * Curated tools: named, parameterized statements a person declares for a connection
 * (`hanactl tools import`), offered to that connection's sessions as MCP tools. The CLI, the
 * daemon and the sessions read them with these schemas and rules.
 */

/** The tools every session registers (test/unit/daemon/catalog/tool-budget.test.ts checks the two agree); a curated tool may not take one of these names. */
export const BUILT_IN_TOOL_NAMES: readonly string[] = [
  'list_connections',
  'use_connection',
  'current_connection',
  'run_query',
  'detect_project',
  'list_schemas',
  'list_tables',
  'describe_table',
  'list_routines',
  'explain_query',
  'sample_rows',
  'search_objects',
];

export const CURATED_PARAM_TYPES = ['string', 'integer', 'number', 'boolean'] as const;
export type CuratedParamType = (typeof CURATED_PARAM_TYPES)[number];

/** Tool names as the audit trail takes them (ToolNameSchema): lower case, digits and `_`. */
export const CURATED_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
const PARAM_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Limits that keep one tool's entry in tools/list small (see CURATED_LIST_SHARE). */
export const MAX_TOOL_DESCRIPTION = 300;
export const MAX_PARAM_DESCRIPTION = 120;
export const MAX_PARAMS_PER_TOOL = 16;
export const MAX_TOOLS_PER_CONNECTION = 50;
export const MAX_CURATED_SQL = 20_000;

/**
 * The bytes of tools/list a connection's curated tools may take, so the whole list an agent
 * loads stays within 8 KB beside the built-in tools (about 7.5 KB with detect_project, and
 * 1.3 KB less when run_query is not offered). A curated-only connection gets run_query's share.
 */
export const CURATED_LIST_SHARE = { mixed: 640, curatedOnly: 1900 } as const;

export const CuratedParamSchema = z.strictObject({
  name: z.string().regex(PARAM_NAME_PATTERN, 'use letters, digits and _ (not starting with a digit), at most 64'),
  type: z.enum(CURATED_PARAM_TYPES, { message: `use one of ${CURATED_PARAM_TYPES.join(', ')}` }),
  description: z.string().max(MAX_PARAM_DESCRIPTION, `at most ${MAX_PARAM_DESCRIPTION} characters`).optional(),
});
export type CuratedParam = z.infer<typeof CuratedParamSchema>;

export const CuratedToolSchema = z.strictObject({
  name: z.string().regex(CURATED_NAME_PATTERN, 'use lower-case letters, digits and _ (starting with a letter), at most 64'),
  description: z
    .string()
    .min(1, 'say what the tool answers: the agent chooses tools by their description')
    .max(MAX_TOOL_DESCRIPTION, `at most ${MAX_TOOL_DESCRIPTION} characters`),
  sql: z.string().min(1, 'the statement is empty').max(MAX_CURATED_SQL, `at most ${MAX_CURATED_SQL} characters`),
  parameters: z.array(CuratedParamSchema).max(MAX_PARAMS_PER_TOOL, `at most ${MAX_PARAMS_PER_TOOL} parameters`).default([]),
});
export type CuratedTool = z.infer<typeof CuratedToolSchema>;

/** `POST /v1/connections/:name/tools`: the file's tools; `replace` swaps the connection's whole set. */
export const CuratedImportRequestSchema = z.strictObject({
  tools: z.array(CuratedToolSchema).min(1, 'the file declares no tools').max(MAX_TOOLS_PER_CONNECTION),
  replace: z.boolean().optional(),
});
export type CuratedImportRequest = z.infer<typeof CuratedImportRequestSchema>;

export const CuratedToolInfoSchema = CuratedToolSchema.extend({
  connection: ConnectionNameSchema,
  createdAt: z.string(),
  /** What the policy judged the statement at import: a write runs only on a connection a person opened for writes. */
  kind: z.enum(['read', 'write']),
  /** False when the connection's curated tools exceed their share of tools/list: sessions do not list it. */
  offered: z.boolean(),
});
export type CuratedToolInfo = z.infer<typeof CuratedToolInfoSchema>;

export const CuratedToolListSchema = z.object({ tools: z.array(CuratedToolInfoSchema) });
export type CuratedToolList = z.infer<typeof CuratedToolListSchema>;

/** `POST /v1/connections/:name/tools/:tool/call`: the agent's arguments, by parameter name. */
export const CuratedCallArgsSchema = z.record(z.string().max(64), z.union([z.string().max(65_536), z.number(), z.boolean()]));
export type CuratedCallArgs = z.infer<typeof CuratedCallArgsSchema>;

/** One `:name` placeholder in a statement. */
export interface Placeholder {
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

/** A problem with a declared tool: what is wrong and how to fix it; `path` points into the file. */
export interface CuratedProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

const isWord = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_$]/.test(c);

/**
 * The `:name` placeholders of `sql`, outside string literals, quoted identifiers and comments
 * (and `::` casts, and PostgreSQL's `$tag$` strings), as the engine's placeholder syntax reads them. Positional markers (`?`, `$1`) are
 * returned as `positional` so a file cannot mix the two.
 */
export function scanPlaceholders(sql: string, engine: Engine): { placeholders: Placeholder[]; positional: string[] } {
  const placeholders: Placeholder[] = [];
  const positional: string[] = [];
  const syntax = engineSpec(engine).placeholders;
  const backslash = syntax.backslashEscapes;
  let i = 0;
  const skipQuoted = (quote: string) => {
    i++;
    while (i < sql.length) {
      const c = sql[i];
      if (backslash && c === '\\' && quote !== '`') i += 2;
      else if (c === quote && sql[i + 1] === quote) i += 2;
      else if (c === quote) return void i++;
      else i++;
    }
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === "'" || c === '"' || (c === '`' && syntax.backtickQuotes)) skipQuoted(c);
    else if (c === '-' && next === '-') i = sql.indexOf('\n', i) < 0 ? sql.length : sql.indexOf('\n', i);
    else if (c === '#' && syntax.hashComments) i = sql.indexOf('\n', i) < 0 ? sql.length : sql.indexOf('\n', i);
    else if (c === '/' && next === '*') i = sql.indexOf('*/', i + 2) < 0 ? sql.length : sql.indexOf('*/', i + 2) + 2;
    else if (c === '$' && syntax.dollarSigns && /[0-9]/.test(next ?? '') && !isWord(sql[i - 1])) {
      const m = /^\$[0-9]+/.exec(sql.slice(i)) as RegExpExecArray;
      positional.push(m[0]);
      i += m[0].length;
    } else if (c === '$' && syntax.dollarSigns && !isWord(sql[i - 1]) && /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.test(sql.slice(i))) {
      const tag = (/^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i)) as RegExpExecArray)[0];
      const close = sql.indexOf(tag, i + tag.length);
      i = close < 0 ? sql.length : close + tag.length;
    } else if (c === '?') {
      positional.push('?');
      i++;
    } else if (c === ':' && next === ':') i += 2;
    else if (c === ':' && /[A-Za-z_]/.test(next ?? '') && !isWord(sql[i - 1])) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j] as string)) j++;
      placeholders.push({ name: sql.slice(i + 1, j), start: i, end: j });
      i = j;
    } else i++;
  }
  return { placeholders, positional };
}

/**
 * Checks a tool's placeholders against its declared parameters and the built-in names; the
 * problems name what is wrong and the fix. `index` is the tool's place in the file.
 */
export function placeholderProblems(tool: CuratedTool, engine: Engine, index: number): CuratedProblem[] {
  const problems: CuratedProblem[] = [];
  const at = (...rest: (string | number)[]) => ['tools', index, ...rest];
  if (BUILT_IN_TOOL_NAMES.includes(tool.name))
    problems.push({ path: at('name'), message: `"${tool.name}" is a built-in tool's name; choose another name for the curated tool.` });
  const { placeholders, positional } = scanPlaceholders(tool.sql, engine);
  if (positional.length > 0)
    problems.push({
      path: at('sql'),
      message: `the statement uses the positional marker ${positional[0]}; name each value with a :name placeholder and declare it under parameters.`,
    });
  const declared = new Map<string, number>();
  tool.parameters.forEach((p, i) => {
    if (declared.has(p.name))
      problems.push({ path: at('parameters', i, 'name'), message: `the parameter "${p.name}" is declared twice; declare each once.` });
    declared.set(p.name, i);
  });
  const used = new Set(placeholders.map((p) => p.name));
  for (const name of used)
    if (!declared.has(name))
      problems.push({
        path: at('sql'),
        message: `the statement uses :${name}, which is not declared; add {name: ${name}, type: ...} under parameters or fix the placeholder.`,
      });
  for (const [name, i] of declared)
    if (!used.has(name))
      problems.push({
        path: at('parameters', i, 'name'),
        message: `the parameter "${name}" is declared but the statement has no :${name}; use it in the statement or remove it.`,
      });
  return problems;
}

/** Problems across the file's tools: a name declared twice. */
export function duplicateProblems(tools: readonly CuratedTool[]): CuratedProblem[] {
  const seen = new Set<string>();
  const problems: CuratedProblem[] = [];
  tools.forEach((t, i) => {
    if (seen.has(t.name))
      problems.push({
        path: ['tools', i, 'name'],
        message: `the tool "${t.name}" is declared twice in this file; give each tool its own name.`,
      });
    seen.add(t.name);
  });
  return problems;
}

/**
 * The statement in the engine's bind syntax (`$1` on PostgreSQL, `?` elsewhere) and the values
 * in order. Every value is bound, never spliced into the text.
 */
export function bindCurated(
  tool: CuratedTool,
  engine: Engine,
  args: CuratedCallArgs,
): { sql: string; params: (string | number | boolean)[] } {
  const { placeholders } = scanPlaceholders(tool.sql, engine);
  const values = new Map<string, string | number | boolean>();
  for (const p of tool.parameters) {
    const value = args[p.name];
    if (value === undefined)
      throw new HanactlError('INVALID_REQUEST', `The tool ${tool.name} needs the argument "${p.name}" (${p.type}); pass it with the call.`);
    values.set(p.name, checkType(tool.name, p, value));
  }
  const unknown = Object.keys(args).filter((k) => !tool.parameters.some((p) => p.name === k));
  if (unknown.length > 0)
    throw new HanactlError(
      'INVALID_REQUEST',
      `The tool ${tool.name} has no argument "${unknown[0]}"; its arguments are ${tool.parameters.map((p) => p.name).join(', ') || 'none'}.`,
    );
  const order = new Map<string, number>();
  const params: (string | number | boolean)[] = [];
  let sql = '';
  let last = 0;
  for (const p of placeholders) {
    sql += tool.sql.slice(last, p.start);
    last = p.end;
    const value = values.get(p.name) as string | number | boolean;
    if (engineSpec(engine).placeholders.bind === 'numbered') {
      let n = order.get(p.name);
      if (n === undefined) {
        params.push(value);
        n = params.length;
        order.set(p.name, n);
      }
      sql += `$${n}`;
    } else {
      params.push(value);
      sql += '?';
    }
  }
  return { sql: sql + tool.sql.slice(last), params };
}

function checkType(tool: string, p: CuratedParam, value: string | number | boolean): string | number | boolean {
  const ok =
    (p.type === 'string' && typeof value === 'string') ||
    (p.type === 'boolean' && typeof value === 'boolean') ||
    (p.type === 'number' && typeof value === 'number' && Number.isFinite(value)) ||
    (p.type === 'integer' && typeof value === 'number' && Number.isSafeInteger(value));
  if (!ok)
    throw new HanactlError(
      'INVALID_REQUEST',
      `The tool ${tool}'s argument "${p.name}" must be ${p.type === 'integer' ? 'an integer' : `a ${p.type}`}.`,
    );
  return value;
}

/**
 * About how many bytes a tool's entry takes in tools/list: name, description, its input schema
 * (a property per parameter, all required) and its annotations, as the session lists it.
 */
export function curatedEntryBytes(tool: CuratedTool): number {
  const properties = Object.fromEntries(
    tool.parameters.map((p) => [p.name, { type: p.type, ...(p.description ? { description: p.description } : {}) }]),
  );
  const entry = {
    name: tool.name,
    description: tool.description,
    inputSchema: { type: 'object', properties, required: tool.parameters.map((p) => p.name), additionalProperties: false },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    execution: { taskSupport: 'forbidden' },
  };
  return JSON.stringify(entry).length + 1;
}

/** Which of a connection's tools, in order, fit its share of tools/list. */
export function offeredTools<T extends CuratedTool>(tools: readonly T[], curatedOnly: boolean): { offered: T[]; left: T[]; bytes: number } {
  const share = curatedOnly ? CURATED_LIST_SHARE.curatedOnly : CURATED_LIST_SHARE.mixed;
  const offered: T[] = [];
  const left: T[] = [];
  let bytes = 0;
  for (const t of tools) {
    const size = curatedEntryBytes(t);
    if (left.length === 0 && bytes + size <= share) {
      offered.push(t);
      bytes += size;
    } else left.push(t);
  }
  return { offered, left, bytes };
}
