import { cliCommand } from '../../shared/cli-command.js';
import {
  bindCurated,
  CURATED_LIST_SHARE,
  type CuratedCallArgs,
  type CuratedImportRequest,
  type CuratedProblem,
  type CuratedTool,
  type CuratedToolInfo,
  curatedEntryBytes,
  duplicateProblems,
  offeredTools,
  placeholderProblems,
} from '../../shared/curated.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import { isProjectRef } from '../../shared/project-schemas.js';
import { kindOf, type StatementPolicy } from '../queries/query-service.js';
import type { ConnectionRecord } from '../registry/connection-record.js';
import type { ConnectionService } from '../registry/connection-service.js';
import type { CuratedRow, Registry } from '../registry/registry.js';

export interface CuratedServiceDeps {
  readonly registry: Pick<Registry, 'listCurated' | 'putCurated' | 'removeCurated'>;
  readonly connections: Pick<ConnectionService, 'resolve' | 'onChange'>;
  readonly policy: StatementPolicy;
}

/** A tool as a session offers and runs it. */
export type CuratedEntry = CuratedToolInfo;

/** Names a problem by where it is in the file: `tools[2] "orders_by_day" parameters[0].type`. */
export function describeProblem(tools: readonly { name?: unknown }[], problem: CuratedProblem): string {
  const [, index, ...rest] = problem.path;
  const tool = typeof index === 'number' ? tools[index] : undefined;
  const named = tool && typeof tool.name === 'string' ? ` "${tool.name}"` : '';
  const where = rest.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
  return `tools[${index}]${named}${where}: ${problem.message}`;
}

/**
 * Curated tools, daemon side: checked when a person imports them (declared parameters, the
 * statement policy of their connection, their share of tools/list), kept in the encrypted
 * registry beside the connection, and bound when a session calls one. Sessions are told when a
 * connection's tools or curated-only setting change.
 */
export class CuratedService {
  readonly #deps: CuratedServiceDeps;
  readonly #listeners = new Set<(connection: string) => void>();

  constructor(deps: CuratedServiceDeps) {
    this.#deps = deps;
    deps.connections.onChange((name) => this.#changed(name));
  }

  /** Checks and stores a file's tools for a registry connection; answers the connection's whole set. */
  async import(connection: string, request: CuratedImportRequest): Promise<CuratedToolInfo[]> {
    const record = this.#registryRecord(connection);
    const engine = record.target.engine;
    const problems = [...duplicateProblems(request.tools), ...request.tools.flatMap((t, i) => placeholderProblems(t, engine, i))];
    const kinds: ('read' | 'write')[] = [];
    for (const [i, tool] of request.tools.entries()) {
      if (problems.some((p) => p.path[1] === i)) continue;
      // The statement as it will run, with the engine's markers: the same check run_query gets.
      const { sql } = bindCurated(tool, engine, sampleArgs(tool));
      try {
        kinds[i] = kindOf(await this.#deps.policy.check(sql, { dialect: engine, allowWrite: record.allowWrite }));
      } catch (err) {
        if (!isHanactlError(err)) throw err;
        const fix = record.allowWrite ? '' : ' The connection is read-only: only a statement that reads can be a curated tool on it.';
        problems.push({ path: ['tools', i, 'sql'], message: `${err.message}${fix}` });
      }
    }
    if (problems.length > 0) {
      const lines = problems.slice(0, 10).map((p) => describeProblem(request.tools, p));
      const more = problems.length > 10 ? ` (and ${problems.length - 10} more)` : '';
      throw new HanactlError('INVALID_REQUEST', `Nothing was imported; fix the file and import it again:\n${lines.join('\n')}${more}`);
    }
    const kept = request.replace ? [] : this.list(connection);
    const all = [...kept, ...request.tools];
    if (!request.replace) {
      const clash = request.tools.find((t) => kept.some((k) => k.name === t.name));
      if (clash)
        throw new HanactlError(
          'CONNECTION_EXISTS',
          `Nothing was imported: "${connection}" has a curated tool named "${clash.name}" already; remove it first (\`${cliCommand()} tools remove ${connection} ${clash.name}\`) or import with --replace to swap the whole set.`,
        );
    }
    const { left, bytes } = offeredTools(all, record.curatedOnly === true);
    if (left.length > 0) {
      const need = all.reduce((n, t) => n + curatedEntryBytes(t), 0);
      const share = record.curatedOnly ? CURATED_LIST_SHARE.curatedOnly : CURATED_LIST_SHARE.mixed;
      const widen = record.curatedOnly
        ? ''
        : ` A curated-only connection (\`${cliCommand()} set ${connection} --curated-only\`) has ${CURATED_LIST_SHARE.curatedOnly} bytes, since run_query is not offered.`;
      throw new HanactlError(
        'INVALID_REQUEST',
        `Nothing was imported: "${connection}"'s curated tools would take ${need} bytes of the tool list an agent loads, and they have ${share} (the first ${bytes} bytes fit, up to "${left[0]?.name}" which does not). Shorten descriptions, or import fewer tools.${widen}`,
      );
    }
    const createdAt = new Date().toISOString();
    this.#deps.registry.putCurated(
      connection,
      request.tools.map((t, i) => ({
        name: t.name,
        description: t.description,
        sql: t.sql,
        parameters: JSON.stringify(t.parameters),
        kind: kinds[i] ?? 'read',
        created_at: createdAt,
      })),
      request.replace === true,
    );
    this.#changed(connection);
    return this.list(connection);
  }

  /** A connection's tools (or every connection's), in import order, each saying whether sessions list it. */
  list(connection?: string): CuratedEntry[] {
    if (connection !== undefined) this.#registryRecord(connection);
    const rows = this.#deps.registry.listCurated(connection);
    const byConnection = new Map<string, CuratedRow[]>();
    for (const row of rows) byConnection.set(row.connection, [...(byConnection.get(row.connection) ?? []), row]);
    const out: CuratedEntry[] = [];
    for (const [name, list] of byConnection) {
      const curatedOnly = this.#deps.connections.resolve(name).curatedOnly === true;
      const tools = list.map(toEntry);
      const { offered } = offeredTools(tools, curatedOnly);
      for (const t of tools) out.push({ ...t, offered: offered.includes(t) });
    }
    return out;
  }

  /** What a session whose active connection is `connection` offers: the tools that fit, and whether run_query goes. */
  forSession(connection: string | null): { tools: CuratedEntry[]; curatedOnly: boolean } {
    if (!connection || isProjectRef(connection)) return { tools: [], curatedOnly: false };
    let record: ConnectionRecord;
    try {
      record = this.#deps.connections.resolve(connection);
    } catch {
      return { tools: [], curatedOnly: false };
    }
    return { tools: this.list(connection).filter((t) => t.offered), curatedOnly: record.curatedOnly === true };
  }

  remove(connection: string, name: string): void {
    this.#registryRecord(connection);
    if (!this.#deps.registry.removeCurated(connection, name)) {
      const names = this.list(connection).map((t) => t.name);
      const known = names.length > 0 ? `Its curated tools: ${names.join(', ')}.` : 'It has no curated tools.';
      throw new HanactlError('NOT_FOUND', `The connection "${connection}" has no curated tool named "${name}". ${known}`);
    }
    this.#changed(connection);
  }

  /** The statement and bound values for a call of `name` on `connection`; the arguments are checked against the declared types. */
  bind(
    connection: string,
    name: string,
    args: CuratedCallArgs,
  ): { tool: CuratedEntry; sql: string; params: (string | number | boolean)[] } {
    const tool = this.list(connection).find((t) => t.name === name);
    if (!tool)
      throw new HanactlError(
        'NOT_FOUND',
        `The connection "${connection}" has no curated tool named "${name}" (a person may have removed it); list the tools again.`,
      );
    const engine = this.#deps.connections.resolve(connection).target.engine;
    return { tool, ...bindCurated(tool, engine, args) };
  }

  /** Calls `listener` with a connection's name when its curated tools or settings change. */
  onChange(listener: (connection: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(connection: string): void {
    for (const listener of this.#listeners) {
      try {
        listener(connection);
      } catch {
        // one session's trouble is not the person's
      }
    }
  }

  #registryRecord(connection: string): ConnectionRecord {
    if (isProjectRef(connection))
      throw new HanactlError(
        'INVALID_REQUEST',
        `Curated tools belong to registry connections; "${connection}" is a project connection. Import it first (\`${cliCommand()} import <dir> --as <name>\`).`,
      );
    return this.#deps.connections.resolve(connection);
  }
}

function toEntry(row: CuratedRow): CuratedEntry {
  return {
    connection: row.connection,
    name: row.name,
    description: row.description,
    sql: row.sql,
    parameters: JSON.parse(row.parameters) as CuratedTool['parameters'],
    kind: row.kind,
    createdAt: row.created_at,
    offered: true,
  };
}

/** A value of each declared type, to shape the statement for the policy check (values are bound, never read by it). */
function sampleArgs(tool: CuratedTool): CuratedCallArgs {
  const sample = { string: 'x', integer: 1, number: 1.5, boolean: true } as const;
  return Object.fromEntries(tool.parameters.map((p) => [p.name, sample[p.type]]));
}
