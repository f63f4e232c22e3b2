import { HanactlError } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import { contextSqlName } from '../context-names.js';
import { assertContextKept, assertContextUnchanged, contextUnavailable } from '../context-unavailable.js';
import type { CostGuard, DriverConnection, ExecuteOptions, StatementResult } from '../driver.js';
import { explainable } from '../plan-cost.js';
import { StatementWatch } from '../statement-watch.js';
import { statementCancelled } from '../stop-errors.js';
import { MYSQL_NOT_EXPLAINABLE, mysqlCostLimitUnavailable, mysqlPlanCost } from './mysql-cost.js';
import { type ErrorContext, isConnectionLost, lostError, statementError } from './mysql-errors.js';
import type { MysqlError, MysqlRawConnection } from './mysql-module.js';
import {
  changesRows,
  type Definition,
  definerReadsRefusal,
  definitionsQuery,
  everyRoutineQuery,
  existingNamesQuery,
  fkActionRefusal,
  hiddenDefinitionRefusal,
  isPackage,
  judgeDefinition,
  MAX_CANDIDATES,
  MAX_REACH_DEPTH,
  MAX_REACHED,
  mayAssignContextRefusal,
  narrowsNames,
  outParameterRefusal,
  outParametersQuery,
  packageRefusal,
  probablyNative,
  type ReachedName,
  reachedBy,
  routineRefusal,
  runsTextRefusal,
  sequenceRefusal,
  sessionChangeRefusal,
  setsContextRefusal,
  shownName,
  statementUnreadableRefusal,
  statisticsRefusal,
  storedModeRefusal,
  tooFarRefusal,
  unreadableRefusal,
  unseenRefusal,
  updatableViewRefusal,
} from './mysql-routines.js';
import { type ServerInfo, sessionSql } from './mysql-session.js';
import { RunningStatement, type StatementOutcome } from './mysql-statement.js';

/** Where a statement's rows stop being read. */
type Caps = Pick<ExecuteOptions, 'maxRows' | 'maxBytes'>;

/** A statement still running this long after its KILL QUERY was sent is given up with its connection. */
export const KILL_GRACE_MS = 2000;
/** How long close() waits for a polite COM_QUIT before cutting the socket. */
const CLOSE_GRACE_MS = 1000;

/** ER_UNSUPPORTED_PS: the statement cannot be prepared server-side. */
const ER_UNSUPPORTED_PS = 1295;

export interface MysqlConnectionDeps {
  readonly server: ServerInfo;
  readonly errors: ErrorContext;
  /** Runs `KILL QUERY <threadId>` from a short-lived second connection with the same credentials. */
  readonly killQuery: (threadId: number) => Promise<void>;
  /** Runs `KILL CONNECTION <threadId>` the same way, and resolves once the server no longer lists the thread. */
  readonly endThread: (threadId: number) => Promise<void>;
}

/**
 * One MySQL/MariaDB session. Read calls run in `START TRANSACTION READ ONLY` inside a read-only
 * session and are always rolled back; writes autocommit. Parameters are bound server-side
 * (prepared statements), never spliced into the SQL text.
 */
export class MysqlConnection implements DriverConnection {
  readonly #raw: MysqlRawConnection;
  readonly #deps: MysqlConnectionDeps;
  /** Rejecters of the round trips in flight, told when the socket dies. */
  readonly #waiters = new Set<(err: unknown) => void>();
  #broken = false;
  #closed = false;
  /**
   * Set once a statement that ignored its KILL QUERY was given up: settles once the server no
   * longer lists the thread after KILL CONNECTION (or, when that KILL could not be sent, at once,
   * the socket cut). close() waits for it.
   */
  #ending: Promise<void> | undefined;
  #busy = false;
  /** Context names this connection has ever set, so each call clears them all first. */
  readonly #contextNames = new Set<string>();
  #lostCause: unknown;
  /** The session `SET` last applied; undefined when it must be asserted again. */
  #session: string | undefined;
  /** A call began and its closing reset has not completed. */
  #dirty = false;

  constructor(raw: MysqlRawConnection, deps: MysqlConnectionDeps) {
    this.#raw = raw;
    this.#deps = deps;
    raw.on('error', (err) => this.#lost(err));
    raw.on('end', () => this.#lost(Object.assign(new Error('The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST' })));
  }

  get broken(): boolean {
    return this.#broken || this.#closed;
  }

  /** The server's connection id (`CONNECTION_ID()`), as `PROCESSLIST` shows it. */
  get threadId(): number | null {
    return this.#raw.threadId;
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    this.#assertUsable();
    if (this.#busy)
      throw new HanactlError('INTERNAL', 'This MySQL connection is already running a statement; a pool lends it to one caller at a time.');
    if (options.signal?.aborted) throw statementCancelled();
    this.#busy = true;
    this.#dirty = true;
    const watch = new StatementWatch({
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      cancel: () => this.#killQuery(),
      graceMs: KILL_GRACE_MS,
      abandon: () => this.#abandon(),
    });
    let inTransaction = false;
    let commit = false;
    let outcome: StatementOutcome;
    const context = options.context ?? {};
    const verify = Object.keys(context).length > 0;
    try {
      await this.#applySession(options.readOnly, options.timeoutMs, verify);
      await this.#applyContext(context);
      // A write with context values runs in a transaction too, so that a statement which changed
      // one is rolled back instead of committed.
      if (options.readOnly || verify) {
        await this.#roundTrip(options.readOnly ? 'START TRANSACTION READ ONLY' : 'START TRANSACTION');
        inTransaction = true;
      }
      const refusal =
        (options.readOnly || verify ? await this.#judgeRoutines(sql, options.readOnly, verify, watch) : undefined) ??
        (options.costGuard && options.readOnly ? await this.#overCost(sql, params, options.costGuard, watch) : undefined);
      outcome = refusal ? { ok: false, error: refusal, capped: false } : await this.#statement(sql, params, options, watch);
    } catch (error) {
      outcome = { ok: false, error, capped: false };
    }
    try {
      // No KILL is in flight past this point, so it cannot hit the ROLLBACK or the next call.
      await watch.stop();
      if (outcome.ok && verify) {
        await this.#verifyContext(context).catch((err: unknown) => {
          throw this.#normalise(err);
        });
      }
      commit = !options.readOnly && outcome.ok;
      // Past the cap, the rows kept are the answer, however the rest of the statement ended.
      if (outcome.ok && outcome.capped) return outcome.result;
      if (watch.reason) throw watch.error();
      if (!outcome.ok) throw this.#normalise(outcome.error, options.timeoutMs);
      return outcome.result;
    } finally {
      // A read call is never committed, whatever happened; a write only when its context held.
      if (inTransaction && commit && !this.#broken) await this.#roundTrip('COMMIT').catch(() => this.#breakNow());
      // The reset rolls back whatever is still open and leaves the session clean for the pool.
      if (!this.#broken) await this.#resetSession().catch(() => this.#breakNow());
      this.#busy = false;
    }
  }

  async ping(): Promise<void> {
    this.#assertUsable();
    await this.#call((done) => this.#raw.ping(done)).catch((err: unknown) => {
      throw this.#normalise(err);
    });
  }

  /** Every call ends with a reset, so a connection the pool gets back holds nothing of it. */
  get dirty(): boolean {
    return this.#dirty;
  }

  async reset(): Promise<void> {
    this.#assertUsable();
    try {
      await this.#resetSession();
    } catch (err) {
      this.#breakNow();
      throw this.#normalise(err);
    }
  }

  /**
   * COM_RESET_CONNECTION, one round trip: the open transaction is rolled back, and whatever the
   * call left in the session is gone — user-level locks (GET_LOCK in a stored function), user
   * variables (a forged @mcp_*), temporary tables, prepared statements, table locks, session
   * variables. mysql2 forgets its prepared statements with them.
   */
  async #resetSession(): Promise<void> {
    this.#dirty = true;
    await this.#call((done) => this.#raw.reset(done));
    this.#contextNames.clear();
    // Re-asserted (read-only mode, time zone, statement limit) on the next execute.
    this.#session = undefined;
    this.#dirty = false;
  }

  async serverVersion(): Promise<string | undefined> {
    return this.#deps.server.version;
  }

  /**
   * Closes the session. One given up while its statement ran resolves only once the server's
   * thread is gone — it saw the KILL CONNECTION, which a statement such as REPLACE on a long
   * string does only when it is done — so the pool counts it until then.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ending) {
      await this.#ending;
      this.#breakNow();
      return;
    }
    if (this.#broken || this.#busy) {
      this.#breakNow();
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#breakNow();
        resolve();
      }, CLOSE_GRACE_MS);
      timer.unref();
      try {
        this.#raw.end(() => {
          clearTimeout(timer);
          resolve();
        });
      } catch {
        clearTimeout(timer);
        this.#breakNow();
        resolve();
      }
    });
  }

  /**
   * Context parameters as session user variables `@mcp_<name>`, in one round trip: every
   * variable this connection ever set is cleared to NULL first, always, then this call's values
   * are bound (server-side prepared, never concatenated). A DBA reads them through a DEFINER
   * function in views.
   */
  async #applyContext(context: Readonly<Record<string, string>>): Promise<void> {
    for (const name of Object.keys(context)) this.#contextNames.add(name);
    if (this.#contextNames.size === 0) return;
    const values: string[] = [];
    const parts = [...this.#contextNames].map((name) => {
      const variable = variableOf(name);
      const value = context[name];
      if (value === undefined) return `${variable} = NULL`;
      values.push(value);
      return `${variable} = ?`;
    });
    try {
      await this.#call((done) => {
        this.#raw
          .execute({ sql: `SET ${parts.join(', ')}` }, values)
          .on('error', (err) => done(err))
          .on('end', () => done(null));
      });
    } catch (err) {
      if (this.#broken) throw err;
      throw contextUnavailable('session user variables (SET @mcp_...)', err);
    }
    // Read back just before the statement: a value the connection's character set cannot carry
    // arrives altered ('?' for what it lacks), and a different customer id must never run.
    const names = [...this.#contextNames];
    const readBack = await this.#readVariables(names);
    assertContextKept(names, context, readBack, 'session user variables (SET @mcp_...)');
  }

  /**
   * Reads this call's context variables back after the statement, before its transaction ends: a
   * statement that assigned one (`@mcp_customer_id := ...`, a stored function's SET) may have read
   * another scope's rows, so its result is refused. User variables are not transactional; the
   * next borrower's call clears them first.
   */
  async #verifyContext(context: Readonly<Record<string, string>>): Promise<void> {
    const names = Object.keys(context);
    const readBack = await this.#readVariables(names);
    assertContextUnchanged(names, context, readBack, 'session user variables (SET @mcp_...)');
  }

  /** The current values of the context variables of `names`, in order, as text. */
  async #readVariables(names: readonly string[]): Promise<unknown[]> {
    let readBack: unknown[] = [];
    await this.#call((done) => {
      this.#raw.query({ sql: `SELECT ${names.map(variableOf).join(', ')}`, rowsAsArray: true }, (err, rows) => {
        readBack = Array.isArray(rows) && Array.isArray(rows[0]) ? (rows[0] as unknown[]).map(asText) : [];
        done(err);
      });
    });
    return readBack;
  }

  /** One session SET when the wanted state differs from the one last applied. */
  async #applySession(readOnly: boolean, timeoutMs: number, separated = false): Promise<void> {
    const sql = sessionSql(this.#deps.server, { readOnly, timeoutMs, separated });
    if (sql === this.#session) return;
    this.#session = undefined;
    await this.#roundTrip(sql);
    this.#session = sql;
  }

  /**
   * Runs the statement as a server-side prepared statement: the server parses the `?`s, so a
   * value can never become SQL, whatever `sql_mode` (e.g. NO_BACKSLASH_ESCAPES) says. A statement
   * the prepare protocol does not support is sent as text, but only when it has no parameters.
   */
  /**
   * The cost guard, in the read's own transaction and session: `EXPLAIN FORMAT=JSON` of the
   * statement with the same bound parameters (planned, not run). Returns the refusal, or
   * undefined when the statement may run: within the limit, not explainable, or a plan with no
   * tables (MySQL gives no cost for it). MariaDB before 11.0 gives no cost at all: refused, since
   * the limit cannot be held.
   */
  async #overCost(sql: string, params: readonly Param[], guard: CostGuard, watch: StatementWatch): Promise<unknown> {
    if (!explainable(sql, MYSQL_NOT_EXPLAINABLE)) return undefined;
    const explained = await this.#statement(`EXPLAIN FORMAT=JSON ${sql}`, params, { maxRows: 1 }, watch);
    if (!explained.ok) return explained.error;
    const row = explained.result.rows[0];
    const cost = row ? mysqlPlanCost(Object.values(row)[0] ?? null) : undefined;
    if (cost !== undefined) return cost > guard.maxCost ? guard.over(cost) : undefined;
    const unavailable = mysqlCostLimitUnavailable(this.#deps.server.version);
    return unavailable ? guard.unavailable(unavailable) : undefined;
  }

  /**
   * The routines and views the statement reaches, looked up in the server's own records in the
   * call's transaction and judged before the statement runs (mysql-routines.ts): one query when
   * the statement names a function (a native one's name too: the server may run a stored function
   * of that name) or a relation (two past NARROW_OVER relation names, where the server narrows
   * them), one more for each level of routines and views their texts reach. Nothing is cached: a person may replace a
   * routine at any moment, and only the server's record at the call is what runs. Returns the
   * refusal, or undefined when the statement may run.
   *
   * On a read-only call, a body holding what no read-only call runs is refused; wherever a call
   * carries context values, a routine assigning @mcp_*, a stored function with an OUT or INOUT
   * parameter (which writes back into what its caller passes), and one reading tables with a SQL SECURITY
   * DEFINER owner's rights (itself DEFINER, or called by such a routine or view). A routine whose
   * body the login may not read, whatever its SQL SECURITY (an INVOKER one may call DEFINER ones),
   * or a routine a DEFINER one calls that the login may not see, cannot be judged and is refused:
   * a native function's name passes there only where the login sees every routine of the schema.
   * Which names are the same is the server's answer: every row it returns for a name is reached. A
   * view whose definition the login may not read (it holds no SHOW VIEW on it and is not its
   * definer) is refused the same way, at any depth.
   */
  async #judgeRoutines(sql: string, readOnly: boolean, separated: boolean, watch: StatementWatch): Promise<unknown> {
    const user = this.#deps.errors.user ?? 'the login';
    const narrows = narrowsNames(this.#deps.server.flavour, this.#deps.server.release);
    interface Pending {
      readonly name: ReachedName;
      readonly kind: 'routine' | 'relation' | 'package' | 'writes';
      readonly path: readonly string[];
      readonly underDefiner: boolean;
      /** Written without a schema in the body that calls it. */
      readonly unqualified?: boolean;
    }
    const writes = separated && !readOnly;
    // Whether the statement, or a body it runs (seen a level before the names it writes), deletes
    // or changes rows: then a table a hidden foreign key may act from is refused (fkActionRefusal).
    let changes = writes && changesRows(sql);
    const first = reachedBy(sql);
    if (first.unreadable) return statementUnreadableRefusal(first.unreadable);
    let pending: Pending[] = [
      ...first.routines.map((name) => ({ name, kind: 'routine' as const, path: [], underDefiner: false })),
      ...first.relations.map((name) => ({ name, kind: 'relation' as const, path: [], underDefiner: false })),
      ...first.packages.map((name) => ({ name, kind: 'package' as const, path: [], underDefiner: false })),
    ];
    const seen = new Set<string>();
    // Whether the login sees every routine of a schema, asked once per schema and call.
    const sees = new Map<string, boolean>();
    const seesEveryRoutine = async (schema: string): Promise<boolean | { readonly error: unknown }> => {
      const known = sees.get(schema);
      if (known !== undefined) return known;
      const query = everyRoutineQuery(schema);
      const outcome = await this.#statement(query.sql, query.values, { maxRows: 1 }, watch);
      if (!outcome.ok) return { error: outcome.error };
      sees.set(schema, outcome.result.rows.length > 0);
      return outcome.result.rows.length > 0;
    };
    const key = (kind: string, schema: string, name: string): string => `${kind}\u0000${schema.toLowerCase()}\u0000${name.toLowerCase()}`;
    for (let depth = 0; pending.length > 0; depth++) {
      // The statement's own names are candidates the server confirms or not (a wide select list
      // names thousands of columns); what they reach is bounded by MAX_REACHED.
      if (depth >= MAX_REACH_DEPTH || pending.length > (depth === 0 ? MAX_CANDIDATES : MAX_REACHED)) return tooFarRefusal();
      // Many relation names (mostly columns and aliases) are first narrowed to those that name a
      // table or view at all; a name that names none reaches nothing.
      const narrowing = narrows ? existingNamesQuery(pending) : undefined;
      if (narrowing) {
        const named = await this.#statement(narrowing.sql, narrowing.values, { maxRows: MAX_CANDIDATES + 1 }, watch);
        if (!named.ok) return named.error;
        if (named.capped) return tooFarRefusal();
        const kept = new Set(named.result.rows.map((row) => Number(row.i)));
        pending = pending.filter((item, index) => item.kind !== 'relation' || kept.has(index));
        if (pending.length === 0) break;
      }
      // A write where rows are separated runs the triggers of what it writes, with their owners'
      // rights: every relation it or a body it runs names may be written (a target, or a table a
      // trigger's body writes), so the triggers of each are judged.
      if (writes) for (const item of pending.filter((p) => p.kind === 'relation')) pending.push({ ...item, kind: 'writes' });
      const query = definitionsQuery(pending, { routinesAsOne: narrows, sequences: separated && this.#deps.server.flavour === 'mariadb' });
      const outcome = await this.#statement(query.sql, query.values, { maxRows: MAX_REACHED + 1 }, watch);
      if (!outcome.ok) return outcome.error;
      if (outcome.capped) return tooFarRefusal();
      // Every row the server's comparison of names returned for a lookup is what that name reaches.
      const found = new Map<number, Definition[]>();
      let keyed: { readonly table: { readonly schema: string; readonly name: string }; readonly path: readonly string[] } | undefined;
      for (const row of outcome.result.rows) {
        const index = Number(row.i);
        if (row.kind === 'UPDATABLE VIEW')
          return updatableViewRefusal({ schema: String(row.s), name: String(row.n) }, pending[index]?.path ?? []);
        // Refused once the level's definitions are judged: a refusal that says more (a trigger's) comes first.
        if (row.kind === 'SEQUENCE') return sequenceRefusal({ schema: String(row.s), name: String(row.n) }, pending[index]?.path ?? []);
        if (row.kind === 'KEYED INNODB') {
          keyed ??= { table: { schema: String(row.s), name: String(row.n) }, path: pending[index]?.path ?? [] };
          continue;
        }
        const definition: Definition = {
          kind: String(row.kind) as Definition['kind'],
          schema: String(row.s),
          name: String(row.n),
          security: String(row.sec),
          body: typeof row.body === 'string' ? row.body : null,
          sqlMode: typeof row.mode === 'string' ? row.mode : null,
          ...(row.kind === 'TRIGGER' ? { table: `${String(row.s)}.${pending[index]?.name.name}` } : {}),
        };
        found.set(index, [...(found.get(index) ?? []), definition]);
      }
      // Where the call carries context values, a stored function with an OUT or INOUT parameter
      // (MariaDB 10.8 and later; MySQL's are all IN) may write a context value back into its
      // caller: asked for every function reached, in one query per level.
      const outParameters = new Map<string, { readonly parameter: string; readonly mode: string }>();
      if (separated && this.#deps.server.flavour === 'mariadb') {
        const functions = [...found.values()].flat().filter((d) => d.kind === 'FUNCTION');
        const asked = outParametersQuery(functions);
        if (asked) {
          const answer = await this.#statement(asked.sql, asked.values, { maxRows: MAX_REACHED + 1 }, watch);
          if (!answer.ok) return answer.error;
          if (answer.capped) return tooFarRefusal();
          for (const row of answer.result.rows) {
            const id = key('FUNCTION', String(row.s), String(row.n));
            if (!outParameters.has(id)) outParameters.set(id, { parameter: String(row.p), mode: String(row.m) });
          }
        }
      }
      const next: Pending[] = [];
      for (const [index, item] of pending.entries()) {
        const matches = found.get(index) ?? [];
        if (matches.length === 0 && item.kind === 'routine' && item.underDefiner) {
          // A native function's name passes only where no stored function of that name can hide.
          const schema = item.name.schema;
          const native = item.unqualified === true && schema !== undefined && probablyNative({ schema: undefined, name: item.name.name });
          const visible = native ? await seesEveryRoutine(schema) : false;
          if (typeof visible !== 'boolean') return visible.error;
          if (!visible) return unseenRefusal(item.name, item.path, user);
        }
        for (const definition of matches) {
          const underDefiner = item.underDefiner || definition.security === 'DEFINER';
          // Reached again under a DEFINER owner's rights, a routine is judged again for what that adds.
          const id = `${key(definition.kind, definition.schema, definition.name)}\u0000${underDefiner}`;
          if (seen.has(id)) continue;
          seen.add(id);
          if (seen.size > MAX_REACHED) return tooFarRefusal();
          // A package's routines are written for sql_mode ORACLE: not judged, so not called.
          if (isPackage(definition)) return packageRefusal(definition, item.path);
          // Refused whatever its body, readable or not, does.
          const out =
            definition.kind === 'FUNCTION' ? outParameters.get(key(definition.kind, definition.schema, definition.name)) : undefined;
          if (out) return outParameterRefusal(definition, item.path, out.parameter, out.mode);
          // A body or view definition that cannot be read cannot be judged, whatever its SQL
          // SECURITY: an INVOKER routine or view may call DEFINER routines, or KILL another
          // caller's query on the same login; a DEFINER view runs what it calls with its owner's rights.
          if (!definition.body) return hiddenDefinitionRefusal(definition, item.path, user);
          const judged = judgeDefinition(definition);
          // Text no reading reads whole is judged only up to where the lexer stopped: refused.
          if (judged.unreadable) return unreadableRefusal(definition, item.path, judged.unreadable);
          // A body the server parses by a grammar this check does not read cannot be judged for what it assigns.
          if (judged.storedMode && separated) return storedModeRefusal(definition, item.path, judged.storedMode);
          if (judged.setsContext && separated) return setsContextRefusal(definition, item.path, judged.setsContext);
          if (judged.mayAssignContext && separated) return mayAssignContextRefusal(definition, item.path, judged.mayAssignContext);
          if (judged.does && readOnly) return routineRefusal(definition, item.path, judged.does);
          // On a read-only call `does` names it already (PREPARE and EXECUTE are no reads).
          if (judged.reached.runsText && separated) return runsTextRefusal(definition, item.path, judged.reached.runsText);
          if (judged.changesSession && (readOnly || separated)) return sessionChangeRefusal(definition, item.path, judged.changesSession);
          if (judged.separatedDoes && separated) return statisticsRefusal(definition, item.path, judged.separatedDoes);
          if (separated && underDefiner && judged.readsTables && definition.kind !== 'VIEW')
            return definerReadsRefusal(definition, item.path);
          if (writes && definition.kind !== 'VIEW' && changesRows(definition.body, true)) changes = true;
          const path = [...item.path, shownName(definition)];
          const inSchema = (name: ReachedName): ReachedName => ({ ...name, schema: name.schema ?? definition.schema });
          for (const name of judged.reached.routines)
            next.push({ name: inSchema(name), kind: 'routine', path, underDefiner, unqualified: name.schema === undefined });
          for (const name of judged.reached.relations) next.push({ name: inSchema(name), kind: 'relation', path, underDefiner });
          for (const name of judged.reached.packages) next.push({ name: inSchema(name), kind: 'package', path, underDefiner });
        }
      }
      if (keyed && changes) return fkActionRefusal(keyed.table, keyed.path);
      const asked = new Set<string>();
      pending = next.filter((p) => {
        const id = `${p.kind}\u0000${p.name.schema ?? '\u0001'}\u0000${p.name.name}\u0000${p.underDefiner}\u0000${p.name.sequenceCall === true}`;
        if (asked.has(id)) return false;
        asked.add(id);
        return true;
      });
    }
    return undefined;
  }

  async #statement(sql: string, params: readonly Param[], caps: Caps, watch: StatementWatch): Promise<StatementOutcome> {
    const first = await this.#stream(() => this.#raw.execute({ sql, rowsAsArray: true }, params), caps, watch);
    if (!first.ok && params.length === 0 && (first.error as MysqlError | undefined)?.errno === ER_UNSUPPORTED_PS && !watch.interrupted) {
      return this.#stream(() => this.#raw.query({ sql, rowsAsArray: true }), caps, watch);
    }
    return first;
  }

  async #stream(start: () => ReturnType<MysqlRawConnection['execute']>, caps: Caps, watch: StatementWatch): Promise<StatementOutcome> {
    if (this.#broken) return { ok: false, error: this.#lostCause, capped: false };
    let running: RunningStatement;
    try {
      running = new RunningStatement(start(), caps.maxRows, () => watch.interrupt(), caps.maxBytes);
    } catch (error) {
      return { ok: false, error, capped: false };
    }
    // mysql2 reports a closed connection on the connection, synchronously, during start().
    if (this.#broken) running.fail(this.#lostCause);
    const fail = (err: unknown): void => running.fail(err);
    this.#waiters.add(fail);
    try {
      return await running.done;
    } finally {
      this.#waiters.delete(fail);
    }
  }

  /**
   * Stops the running statement on the server (KILL QUERY from a second connection). When the
   * KILL cannot be sent the connection is given up at once; when the statement ignores it, the
   * watch gives it up after KILL_GRACE_MS.
   */
  async #killQuery(): Promise<void> {
    const threadId = this.#raw.threadId;
    try {
      if (threadId === null) throw new Error('The connection has no server thread id.');
      await this.#deps.killQuery(threadId);
    } catch {
      this.#breakNow();
    }
  }

  #roundTrip(sql: string): Promise<void> {
    return this.#call((done) => this.#raw.query({ sql }, (err) => done(err)));
  }

  /** One callback-style round trip that also fails when the socket dies under it. */
  #call(send: (done: (err: MysqlError | null) => void) => void): Promise<void> {
    if (this.#broken) return Promise.reject(this.#lostCause ?? new Error('The connection is broken.'));
    return new Promise<void>((resolve, reject) => {
      const fail = (err: unknown): void => {
        this.#waiters.delete(fail);
        reject(err);
      };
      this.#waiters.add(fail);
      try {
        send((err) => {
          this.#waiters.delete(fail);
          if (err) {
            if (isConnectionLost(err)) this.#lost(err);
            reject(err);
          } else resolve();
        });
      } catch (err) {
        fail(err);
      }
    });
  }

  #assertUsable(): void {
    if (this.#closed) throw new HanactlError('INTERNAL', 'This MySQL connection was closed.');
    if (this.#broken) throw lostError(this.#lostCause, this.#deps.errors);
  }

  #normalise(err: unknown, timeoutMs?: number): HanactlError {
    if (isConnectionLost(err)) this.#lost(err);
    return statementError(err, this.#deps.errors, timeoutMs);
  }

  /** The socket died or the session was killed: broken from now on, every waiter told. */
  #lost(err: unknown): void {
    if (this.#closed && !this.#busy) return;
    this.#broken = true;
    this.#lostCause ??= err;
    this.#session = undefined;
    for (const fail of [...this.#waiters]) fail(err);
  }

  /**
   * Gives up a statement that ignored its KILL QUERY: every round trip in flight fails now (the
   * call ends with its timeout or cancellation), and the server is asked to end the session
   * (KILL CONNECTION), its thread watched until it is gone. When that KILL cannot be sent, the
   * socket is cut at once: the thread then ends when it next checks its kill flag, unwatched.
   */
  #abandon(): void {
    this.#lost(Object.assign(new Error('The connection was given up by hanactl.'), { code: 'PROTOCOL_CONNECTION_LOST' }));
    const threadId = this.#raw.threadId;
    this.#ending = (async () => {
      try {
        if (threadId === null) throw new Error('The connection has no server thread id.');
        await this.#deps.endThread(threadId);
      } catch {
        this.#breakNow();
      }
    })();
  }

  /** Gives the connection up now: mysql2 refuses new commands and the socket is cut. */
  #breakNow(): void {
    const cause = Object.assign(new Error('The connection was closed by hanactl.'), { code: 'PROTOCOL_CONNECTION_LOST' });
    this.#lost(cause);
    try {
      this.#raw.destroy();
      this.#raw.stream?.destroy();
    } catch {
      // Already closed.
    }
  }
}

/** The session user variable that carries a context parameter. */
function variableOf(name: string): string {
  return `@mcp_${contextSqlName(name)}`;
}

/** A user variable set from a string reads back as a string, or as bytes under a binary collation. */
function asText(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}
