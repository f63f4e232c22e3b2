import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { cliCommand } from '../../shared/cli-command.js';
import {
  type CuratedImportRequest,
  CuratedImportRequestSchema,
  type CuratedProblem,
  type CuratedToolInfo,
  CuratedToolListSchema,
  duplicateProblems,
  placeholderProblems,
} from '../../shared/curated.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';

/** A YAML file read for its tools, with the line of any place in it. */
interface ToolFile {
  readonly value: unknown;
  lineOf(path: readonly (string | number)[]): number | undefined;
}

function readToolFile(path: string): ToolFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new HanactlError(
      'INVALID_REQUEST',
      `Cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}); name a YAML file of tools.`,
    );
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0] as (typeof doc.errors)[number];
    const line = e.linePos?.[0]?.line;
    throw new HanactlError(
      'INVALID_REQUEST',
      `${path}${line ? ` line ${line}` : ''}: not valid YAML (${e.message.split('\n')[0]}). Fix the file and import it again.`,
    );
  }
  const lineOf = (p: readonly (string | number)[]): number | undefined => {
    // The nearest node that exists: a missing key is reported at its parent's line.
    for (let n = p.length; n >= 0; n--) {
      const node = doc.getIn(p.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range) return lines.linePos(node.range[0]).line;
    }
    return undefined;
  };
  return { value: doc.toJS(), lineOf };
}

/** `tools[2] "name".sql: ...` with the line of that place in the file. */
function located(file: ToolFile, path: string, problem: CuratedProblem): string {
  const line = file.lineOf(problem.path);
  const tools = (file.value as { tools?: { name?: unknown }[] } | null)?.tools;
  const [, index, ...rest] = problem.path;
  const tool = typeof index === 'number' && Array.isArray(tools) ? tools[index] : undefined;
  const named = tool && typeof tool.name === 'string' ? ` "${tool.name}"` : '';
  const where =
    index === undefined ? '' : `tools[${index}]${named}${rest.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}: `;
  return `${path}${line ? ` line ${line}` : ''}: ${where}${problem.message}`;
}

function refuse(lines: readonly string[]): never {
  const more = lines.length > 10 ? `\n(and ${lines.length - 10} more)` : '';
  throw new HanactlError(
    'INVALID_REQUEST',
    `Nothing was imported; fix the file and import it again:\n${lines.slice(0, 10).join('\n')}${more}`,
  );
}

/**
 * `hanactl tools import <connection> <file>`: reads the YAML file, checks its shape and
 * placeholders here (naming the line of each problem), then sends the tools to the daemon,
 * which checks them again, with the connection's statement policy, and stores them.
 */
export async function importTools(
  ctx: CliContext,
  connection: string,
  file: string,
  options: { replace?: boolean; json?: boolean },
): Promise<void> {
  const path = resolve(ctx.cwd, file);
  const doc = readToolFile(path);
  const top = doc.value;
  if (!top || typeof top !== 'object' || Array.isArray(top) || !('tools' in top))
    refuse([`${path}: the file has no "tools:" list at the top; see \`${cliCommand()} tools import --help\` for its shape.`]);
  const parsed = CuratedImportRequestSchema.safeParse({
    tools: (top as { tools: unknown }).tools,
    ...(options.replace ? { replace: true } : {}),
  });
  if (!parsed.success)
    refuse(parsed.error.issues.map((i) => located(doc, path, { path: i.path as (string | number)[], message: i.message })));
  const request: CuratedImportRequest = parsed.data;
  const info = await ctx.daemon.getConnection(connection);
  const problems = [...duplicateProblems(request.tools), ...request.tools.flatMap((t, i) => placeholderProblems(t, info.engine, i))];
  if (problems.length > 0) refuse(problems.map((p) => located(doc, path, p)));
  let tools: CuratedToolInfo[];
  try {
    tools = (await ctx.daemon.request('POST', `/v1/connections/${encodeURIComponent(connection)}/tools`, request, CuratedToolListSchema))
      .tools;
  } catch (err) {
    // The daemon names tools by their place in the file; add the line.
    if (isHanactlError(err))
      throw new HanactlError(
        err.code,
        err.message.replace(/^tools\[(\d+)\]/gm, (m, i: string) => {
          const line = doc.lineOf(['tools', Number(i)]);
          return line ? `${path} line ${line}: ${m}` : m;
        }),
      );
    throw err;
  }
  if (options.json) return printJson(ctx, { connection, tools });
  const added = request.tools.map((t) => t.name);
  ctx.out(`Imported ${added.length} curated tool${added.length === 1 ? '' : 's'} into "${connection}": ${added.join(', ')}.`);
  ctx.out(
    `Sessions using "${connection}" now offer ${tools.length === 1 ? 'it' : 'them'} as MCP tools${info.curatedOnly ? ' (curated-only: no run_query)' : ''}.`,
  );
}

/** `hanactl tools list [<connection>]`. */
export async function listTools(ctx: CliContext, connection: string | undefined, options: { json?: boolean }): Promise<void> {
  const query = connection ? `?connection=${encodeURIComponent(connection)}` : '';
  const { tools } = await ctx.daemon.request('GET', `/v1/tools${query}`, undefined, CuratedToolListSchema);
  if (options.json) return printJson(ctx, { tools });
  if (tools.length === 0) {
    ctx.out(
      `No curated tools${connection ? ` on "${connection}"` : ''}. Declare some with \`${cliCommand()} tools import <connection> <file.yaml>\`.`,
    );
    return;
  }
  const rows = tools.map((t) => ({
    connection: t.connection,
    name: t.name,
    parameters: t.parameters.map((p) => `${p.name}:${p.type}`).join(', '),
    kind: t.kind,
    offered: t.offered ? 'yes' : 'no (over its tool-list share)',
    description: t.description.length > 60 ? `${t.description.slice(0, 57)}...` : t.description,
  }));
  ctx.out(renderTable(['connection', 'name', 'parameters', 'kind', 'offered', 'description'], rows));
}

/** `hanactl tools remove <connection> <name>`. */
export async function removeTool(ctx: CliContext, connection: string, name: string, options: { json?: boolean }): Promise<void> {
  await ctx.daemon.request('DELETE', `/v1/connections/${encodeURIComponent(connection)}/tools/${encodeURIComponent(name)}`);
  if (options.json) return printJson(ctx, { connection, removed: name });
  ctx.out(`Removed the curated tool "${name}" from "${connection}".`);
}
