import { cliCommand } from '../../shared/cli-command.js';
import { formatTarget, parseConnectionUrl } from '../../shared/connection-url.js';
import { ENGINES, engineSpec } from '../../shared/engines.js';
import { HanactlError } from '../../shared/errors.js';
import { assertConnectionName } from '../../shared/names.js';
import type { AddConnectionRequest, ConnectionInfo, UpdateConnectionRequest } from '../../shared/schemas.js';
import { normaliseContextNames } from '../engines/context-names.js';
import { costGuardUnavailable, ENGINE_TABLE, signsContext } from '../engines/index.js';
import { costGuardWithContext } from '../queries/cost-guard.js';
import { type ConnectionRecord, makeRecord } from './connection-record.js';
import type { Registry } from './registry.js';

/** The engines whose context values can be signed, as people name them (`PostgreSQL`). */
const signingEngines = (): string =>
  ENGINES.filter(signsContext)
    .map((engine) => engineSpec(engine).label)
    .join(', ');

/** How long `hanactl add` waits for its connection test: the connect timeout (10 s by default) and a ping, with room to spare. */
export const ADD_TEST_MS = 20_000;

/** What `ConnectionService` needs from the pools: to drop a pool whose definition changed. */
export interface PoolForgetter {
  forget(record: ConnectionRecord): Promise<void>;
}

/** The public view of a record: never the password. */
export function toConnectionInfo(record: ConnectionRecord): ConnectionInfo {
  return {
    name: record.name,
    engine: record.target.engine,
    url: formatTarget(record.target),
    ...(record.description ? { description: record.description } : {}),
    hasPassword: Boolean(record.password),
    allowWrite: record.allowWrite,
    context: [...record.context],
    createdAt: record.createdAt,
    ...(record.maxResultBytes !== undefined ? { maxResultBytes: record.maxResultBytes } : {}),
    ...(record.signedContext ? { signedContext: true } : {}),
    ...(record.curatedOnly ? { curatedOnly: true } : {}),
    ...(record.maxCost !== undefined ? { maxCost: record.maxCost } : {}),
    ...(record.approveWrites ? { approveWrites: true } : {}),
    ...(record.approvalTimeoutSeconds !== undefined ? { approvalTimeoutSeconds: record.approvalTimeoutSeconds } : {}),
    ...(record.contextClaims ? { contextClaims: { ...record.contextClaims } } : {}),
  };
}

/** Registered connections: add, list, resolve, remove. */
export class ConnectionService {
  readonly #registry: Registry;
  readonly #pools: PoolForgetter;
  /**
   * Records by name, read once from the registry: the daemon is the registry's only writer, and
   * every write goes through this service, which drops the cached entry. Keeps the per-call
   * lookup off SQLite on the hot path.
   */
  readonly #cache = new Map<string, ConnectionRecord>();
  readonly #listeners = new Set<(name: string) => void>();

  constructor(registry: Registry, pools: PoolForgetter) {
    this.#registry = registry;
    this.#pools = pools;
  }

  list(): ConnectionRecord[] {
    return this.#registry.list();
  }

  /** The record for a name, or CONNECTION_NOT_FOUND naming the connections that exist. */
  resolve(name: string): ConnectionRecord {
    const cached = this.#cache.get(name);
    if (cached) return cached;
    const record = this.#registry.get(name);
    if (record) {
      this.#cache.set(name, record);
      return record;
    }
    const names = this.#registry.list().map((r) => r.name);
    const known =
      names.length > 0
        ? `Known connections: ${names.join(', ')}.`
        : `No connections are registered yet; a person adds one with \`${cliCommand()} add <name> <url>\`.`;
    throw new HanactlError('CONNECTION_NOT_FOUND', `There is no connection named "${name}". ${known}`);
  }

  /**
   * Registers a connection. With `probe` (the connection test), the new record is tried first and
   * saved only if it answers within ADD_TEST_MS; a failure saves nothing and says so.
   */
  async add(request: AddConnectionRequest, probe?: (record: ConnectionRecord) => Promise<unknown>): Promise<ConnectionRecord> {
    assertConnectionName(request.name);
    // The CLI already made SQLite paths absolute; a relative path here is relative to nothing useful.
    const parsed = parseConnectionUrl(request.url, '/');
    if (parsed.password !== undefined && request.password !== undefined) {
      throw new HanactlError('INVALID_REQUEST', 'The password was given twice (inside the URL and separately); give it once.');
    }
    const context = normaliseContextNames(request.context ?? []);
    const record = makeRecord(
      {
        name: request.name,
        target: parsed.target,
        ...(request.description ? { description: request.description } : {}),
        allowWrite: request.allowWrite ?? false,
        context,
        createdAt: new Date().toISOString(),
      },
      request.password ?? parsed.password,
    );
    const previous = this.#registry.get(request.name);
    if (previous && !request.replace) {
      throw new HanactlError(
        'CONNECTION_EXISTS',
        `A connection named "${request.name}" already exists; remove it first or add with --replace.`,
      );
    }
    if (probe) await this.#tryFirst(record, probe);
    this.#registry.put(record, request.replace ?? false);
    // Replaced by a connection to another engine: nothing there would verify a signature.
    if (previous?.signedContext && !signsContext(record.target.engine)) this.#registry.setSignedContext(record.name, false);
    this.#cache.delete(record.name);
    if (previous) await this.#pools.forget(previous);
    return record;
  }

  async #tryFirst(record: ConnectionRecord, probe: (record: ConnectionRecord) => Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        probe(record),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new HanactlError('CONNECT_FAILED', `The database did not answer within ${ADD_TEST_MS / 1000} s.`)),
            ADD_TEST_MS,
          );
        }),
      ]);
    } catch (err) {
      await this.#pools.forget(record).catch(() => {});
      const cause = err instanceof Error ? err.message : String(err);
      const code = err instanceof HanactlError ? err.code : 'CONNECT_FAILED';
      const details = err instanceof HanactlError ? err.details : {};
      throw new HanactlError(
        code,
        `The connection test failed, so "${record.name}" was not saved: ${cause.replace(/\.?$/, '.')} Fix the URL or the password and run \`${cliCommand()} add\` again, or save it untested with --no-test.`,
        details,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Changes what a person decides (write access, context names, description, result cap); the secret stays. */
  update(name: string, changes: UpdateConnectionRequest): ConnectionRecord {
    const current = this.resolve(name);
    if (changes.signedContext === true && !signsContext(current.target.engine)) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `Signed context values are available on ${signingEngines()} connections only; "${name}" is ${current.target.engine}. See docs/context-parameters.md for what holds on this engine.`,
      );
    }
    if (typeof changes.maxCost === 'number') {
      const unavailable = costGuardUnavailable(current.target.engine);
      if (unavailable) throw new HanactlError('INVALID_REQUEST', `${unavailable} "${name}" keeps no cost limit.`);
    }
    const allowWrite = changes.allowWrite ?? current.allowWrite;
    if (changes.approveWrites === true && !allowWrite) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `"${name}" is read-only: every write is refused there, so there is nothing to approve. Open it for writes in the same command: \`${cliCommand(`set ${name} --allow-write --approve-writes`)}\`.`,
      );
    }
    const context = changes.context ? normaliseContextNames(changes.context) : [...current.context];
    const maxCost = changes.maxCost === null ? undefined : (changes.maxCost ?? current.maxCost);
    if (context.length > 0 && maxCost !== undefined) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `--max-cost and context names cannot be combined on "${name}": ${costGuardWithContext(name)} Choose one: \`${cliCommand(`set ${name} --no-max-cost`)}\` or \`${cliCommand(`set ${name} --no-context`)}\`.`,
      );
    }
    const contextClaims = nextContextClaims(name, current.contextClaims ?? {}, changes.contextClaims, context);
    const { password: _p, signedContext: _s, ...fields } = { ...current, password: undefined };
    const description = changes.description ?? current.description;
    const record = makeRecord(
      {
        ...fields,
        ...(description ? { description } : {}),
        allowWrite,
        context,
      },
      current.password,
    );
    this.#registry.put(record, true);
    if (contextClaims) this.#registry.setContextClaims(name, contextClaims);
    if (changes.maxResultBytes !== undefined) this.#registry.setResultLimit(name, changes.maxResultBytes);
    if (changes.signedContext !== undefined) this.#registry.setSignedContext(name, changes.signedContext);
    if (changes.curatedOnly !== undefined) this.#registry.setCuratedOnly(name, changes.curatedOnly);
    if (changes.maxCost !== undefined) this.#registry.setCostLimit(name, changes.maxCost);
    if (changes.approveWrites !== undefined || changes.approvalTimeoutSeconds !== undefined) {
      this.#registry.setApproval(name, {
        ...(changes.approveWrites !== undefined ? { approveWrites: changes.approveWrites } : {}),
        ...(changes.approvalTimeoutSeconds !== undefined ? { timeoutSeconds: changes.approvalTimeoutSeconds } : {}),
      });
    }
    this.#cache.delete(record.name);
    const updated = this.resolve(name);
    for (const listener of this.#listeners) listener(name);
    return updated;
  }

  /** Calls `listener` with a connection's name when a person changed its settings or removed it. */
  onChange(listener: (name: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The SQL that installs the function verifying this connection's signed context values (it holds the key). */
  contextSql(name: string, options: { role?: string; schema?: string }): string {
    const record = this.resolve(name);
    const installSql = ENGINE_TABLE[record.target.engine].signedContextSql;
    if (!installSql) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `Signed context values are available on ${signingEngines()} connections only; "${name}" is ${record.target.engine}.`,
      );
    }
    if (!record.signedContext || !record.contextKey) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `"${name}" does not sign its context values; switch it on first with \`${cliCommand()} set ${name} --signed-context\`.`,
      );
    }
    const role = options.role ?? record.target.user;
    if (!role)
      throw new HanactlError(
        'INVALID_REQUEST',
        `"${name}" has no user in its URL; name the role that should call the function with --role.`,
      );
    return installSql({ key: record.contextKey, role, ...(options.schema ? { schema: options.schema } : {}) });
  }

  async remove(name: string): Promise<void> {
    const record = this.resolve(name);
    this.#registry.remove(name);
    this.#cache.delete(name);
    for (const listener of this.#listeners) listener(name);
    await this.#pools.forget(record);
  }
}

/**
 * The context-claim mappings after a change: each given name set to its claim or (null) removed,
 * mappings of names no longer declared dropped. A name the connection does not declare, or a
 * claim name that is not a plain claim, is refused. Undefined when nothing changes.
 */
function nextContextClaims(
  connection: string,
  current: Readonly<Record<string, string>>,
  changes: Readonly<Record<string, string | null>> | undefined,
  declared: readonly string[],
): Record<string, string> | undefined {
  const next: Record<string, string> = {};
  for (const [name, claim] of Object.entries(current)) if (declared.includes(name)) next[name] = claim;
  for (const [rawName, claim] of Object.entries(changes ?? {})) {
    const name = rawName.trim().toUpperCase();
    if (claim === null) {
      delete next[name];
      continue;
    }
    if (!declared.includes(name)) {
      const names = declared.length > 0 ? `it declares ${declared.join(', ')}` : 'it declares none';
      throw new HanactlError(
        'CONTEXT_INVALID',
        `"${connection}" has no context parameter ${name} (${names}); declare it first: \`${cliCommand(`set ${connection} --context ${[...declared, name].join(',')}`)}\`.`,
      );
    }
    if (!/^[A-Za-z_][A-Za-z0-9_.:/-]*$/.test(claim)) {
      throw new HanactlError(
        'CONTEXT_INVALID',
        `"${claim}" is not a claim name: use the name of a top-level claim of the access token, e.g. customer_id.`,
      );
    }
    next[name] = claim;
  }
  const same = Object.keys(next).length === Object.keys(current).length && Object.entries(next).every(([k, v]) => current[k] === v);
  return same ? undefined : next;
}
