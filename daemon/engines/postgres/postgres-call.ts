import { contextSqlName } from '../context-names.js';
import type { ExecuteOptions } from '../driver.js';
import { explainable } from '../plan-cost.js';
import { signContextValue } from '../signed-context.js';
import type { BatchGate, BatchStep } from './postgres-batch.js';
import { CLEANUP_STATEMENTS, freshSeed, REMOTE_DISCONNECT_ALL, REMOTE_LINKS_PRESENT } from './postgres-cleanup.js';
import { POSTGRES_NOT_EXPLAINABLE, postgresTopCost } from './postgres-cost.js';
import { type ResolveStage, resolveStep } from './postgres-resolve.js';
import { signatureSetting } from './postgres-signed-context.js';

/** One call as one batch, and where its steps sit in it. */
export interface CallPlan {
  readonly steps: readonly BatchStep[];
  /** The context names this call sets, in order. */
  readonly names: readonly string[];
  /** The step that sets the statement limit and the context values. */
  readonly settings: number;
  /** The step that resolves what the statement names (resolveStep); -1 without one. */
  readonly resolve: number;
  readonly statement: number;
  /** The cost guard's `EXPLAIN` of the statement, just before it; -1 without a guard. */
  readonly explain: number;
  /** The step that reads the context values back; -1 without any. */
  readonly readBack: number;
  /** COMMIT or ROLLBACK: a failure past it leaves the call's answer standing. */
  readonly end: number;
  /** The COMMIT of the clean-up's own transaction block: past it the session is clean. */
  readonly cleaned: number;
  /** The step that answers whether dblink or postgres_fdw is installed; -1 behind a pooler (the clean-up closes them). */
  readonly remoteLinks: number;
}

/** The text a failed check carries, so that the failure names its parameter. */
export const notKeptMarker = (name: string): string => `hanactl: context parameter ${name} did not keep its value`;
export const changedMarker = (name: string): string => `hanactl: context parameter ${name} was changed by the statement`;
/** The text a failed role check carries (roleCheck): the call would not run as the connection's login. */
export const ROLE_MARKER = 'hanactl: the call would run as a role other than the login';
export const ROLE_CHANGED_MARKER = 'hanactl: the statement changed the role the call runs as';

/**
 * Where rows are separated, a call runs as the connection's login and no other role: a role's or
 * database's default `role` (pg_db_role_setting, applied by every new backend; `RESET ROLE` and
 * the clean-up return to it, RESET ALL keeps it) or `session_authorization` would otherwise make
 * every call run with that role's rights and policies. The call's transaction sets both back to
 * the login's own (SET LOCAL: on the backend that runs the call, also behind a pooler), and the
 * settings step checks the result (roleCheck) before the statement runs. Row security is on, as
 * the policies that separate callers need, whatever the login's default.
 */
const LOGIN_ROLE_STEPS: readonly BatchStep[] = [
  { text: 'SET LOCAL SESSION AUTHORIZATION DEFAULT' },
  { text: 'SET LOCAL ROLE NONE' },
  // A default `row_security = off` (which RESET ALL returns to) fails every read the policies bind.
  { text: 'SET LOCAL row_security = on' },
];

/**
 * Where rows are separated, the agent's statement is planned with cpu_operator_cost = 0, so that
 * no condition of its own runs on a scan before the row-security policy (or a security_barrier
 * view's condition) has passed the row. The planner orders a scan's conditions by security level
 * and puts one of the caller's ahead of the policy only when it counts as leakproof and costs
 * less than 10 × cpu_operator_cost (order_qual_clauses); PostgreSQL counts as leakproof a call
 * with no column argument and a sub-select's value, either of which can fail on a hidden row
 * and tell the caller what it held. At 0 no cost is below the bar. It is set after the resolve
 * step (hanactl's own walk keeps the server's costs), for the statement and its EXPLAIN alike.
 */
const POLICY_FIRST = "pg_catalog.set_config('cpu_operator_cost', '0', true)";

/**
 * A check that the call runs as the login: current_user is session_user, and session_user is
 * `login` (the parameter $n) where the client knows its login. 0 when it holds; else fails with `marker`.
 */
function roleCheck(marker: string, login?: number): string {
  const same = 'CURRENT_USER OPERATOR(pg_catalog.=) SESSION_USER';
  const test = login === undefined ? same : `${same} AND SESSION_USER OPERATOR(pg_catalog.=) $${login}::pg_catalog.name`;
  return failUnless(test, marker, 'CURRENT_USER::pg_catalog.text');
}

/**
 * An expression that is 0 when `test` holds and otherwise fails the step with `marker` (a cast of
 * text that is not a number). The text depends on a value read at run time (`left(x, 0)` is ''
 * or NULL, which concat skips), so the planner cannot fold the failing branch into a failure of
 * every call.
 */
function failUnless(test: string, marker: string, runtime: string): string {
  const literal = `'${marker.replace(/'/g, "''")}'`;
  return `CASE WHEN ${test} THEN 0 ELSE pg_catalog.int4in(pg_catalog.textout(pg_catalog.concat(${literal}, pg_catalog.left(${runtime}, 0)))) END`;
}

/**
 * Resets the session and opens the call's transaction (read-only for a read). Where rows are
 * separated a read pins REPEATABLE READ: under SERIALIZABLE (a database's or role's default, which
 * RESET ALL keeps) a read takes a predicate lock on every tuple it fetches, those the policy then
 * removes included, and that lock state is server state another statement could count. REPEATABLE
 * READ takes none, and gives the call's steps one snapshot, as SERIALIZABLE would. A write keeps
 * the default the person chose for the data it changes.
 */
function openingSteps(options: ExecuteOptions): BatchStep[] {
  const begin = !options.readOnly ? 'BEGIN' : options.separated ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN READ ONLY';
  return [{ text: 'RESET ALL' }, { text: begin }, ...(options.separated ? LOGIN_ROLE_STEPS : [])];
}

/** The last step of planOpening: the backend's own pid. */
const PID_STEP = 'SELECT pg_catalog.pg_backend_pid()';

/**
 * Behind a transaction pooler (PgBouncer in transaction mode) the backend that runs a call is
 * known only once its transaction is open: the pid the pooler announced at connect time is its
 * own. A call that signs context values then opens its transaction first and asks the backend
 * for its pid (the last step's first row); the pooler keeps that backend for the client until
 * the transaction ends, and planCall(..., opened = true) sends the rest.
 */
export function planOpening(options: ExecuteOptions): readonly BatchStep[] {
  return [...openingSteps(options), { text: PID_STEP }];
}

/**
 * While the statement runs, the server looks every second whether its client is still there and
 * ends the statement if not (PostgreSQL 14 and later). A cancel can be lost (behind a pooler, or
 * while the backend reads the rest of the batch); a connection whose cancel did not take is closed
 * (#abandon), and with this the statement ends with it, instead of running to its timeout.
 */
const CLIENT_CHECK = "pg_catalog.set_config('client_connection_check_interval', '1000', true)";

/**
 * The steps of one call, sent in one round trip (see PgBatch): reset the session, open the
 * transaction (read-only for a read), set the statement limit and the context values (each
 * checked to have kept the value set), under a cost guard plan the statement (EXPLAIN, the gate
 * of a two-part batch: see costGate), resolve what the statement names (resolveStep), run the statement for at most maxRows + 1 rows, read the
 * context values back (a statement that changed one fails this step, so a write is not
 * committed), end the transaction, clean the session in a transaction block of its own
 * (CLEANUP_STATEMENTS and a fresh random seed), ask about dblink and postgres_fdw.
 *
 * The clean-up's own block keeps the backend with this client should a part of it fail: behind a
 * transaction pooler the client keeps its backend while a transaction is open, and the call's
 * clean-up after a failure (scrubMessage) must reach the backend that ran it. Behind a pooler
 * (`pooled`) dblink and postgres_fdw connections are closed inside that block as well: a
 * round trip after the batch would reach another backend.
 *
 * Every name the checks use is schema-qualified, operators included: the statement may have
 * moved `search_path`. Names are validated identifiers; values are bound. With `opened`, the
 * transaction is already open (planOpening) and the plan starts at the settings. `stage` says
 * how far the resolve step goes (resolveStep).
 */
export function planCall(
  sql: string,
  params: readonly (string | Buffer | null)[],
  options: ExecuteOptions,
  pid?: number,
  opened = false,
  checksClient = false,
  stage: ResolveStage = 'first',
  pooled = false,
  login?: string,
): CallPlan {
  const context = options.context ?? {};
  const names = Object.keys(context);
  const values = names.map((name) => context[name] as string);
  const timeout = String(Math.max(1, Math.floor(options.timeoutMs)));
  const setting = (name: string) => `'mcp.${contextSqlName(name)}'`;
  const current = (name: string) => `pg_catalog.current_setting(${setting(name)}, true)`;
  const sets = names.map((name, i) =>
    failUnless(
      `pg_catalog.set_config(${setting(name)}, $${i + 2}, true) OPERATOR(pg_catalog.=) $${i + 2}`,
      notKeptMarker(name),
      current(name),
    ),
  );
  // Signed mode: each value's signature beside it, for the backend that runs this call.
  const key = options.contextKey;
  if (key && names.length > 0 && !pid) throw new Error('The backend of this connection has no known pid to sign context values for.');
  const signatures = key && pid ? names.map((name, i) => signContextValue(key, pid, name, values[i] as string)) : [];
  const signs = signatures.map(
    (_, i) => `pg_catalog.set_config('${signatureSetting(names[i] as string)}', $${names.length + i + 2}, true)`,
  );
  const steps: BatchStep[] = opened ? [] : openingSteps(options);
  const settings = steps.length;
  // What the statement names, resolved by the server before it runs (postgres-resolve.ts).
  const resolving = resolveStep(options.references, stage, !options.readOnly);
  // Where rows are separated, the call runs as the login (LOGIN_ROLE_STEPS), checked before anything else.
  const asLogin = options.separated && login !== undefined ? [login] : [];
  const roles = options.separated ? [roleCheck(ROLE_MARKER, asLogin.length > 0 ? values.length + signatures.length + 2 : undefined)] : [];
  steps.push({
    text: `SELECT ${[
      ...roles,
      "pg_catalog.set_config('statement_timeout', $1, true)",
      ...(checksClient ? [CLIENT_CHECK] : []),
      ...sets,
      ...signs,
      ...(resolving ? [JIT_OFF] : options.separated ? [POLICY_FIRST] : []),
    ].join(', ')}`,
    values: [timeout, ...values, ...signatures, ...asLogin],
  });
  const resolve = resolving ? steps.length : -1;
  if (resolving) steps.push({ ...resolving, firstRowOnly: true }, { text: options.separated ? `${JIT_BACK}, ${POLICY_FIRST}` : JIT_BACK });
  let explain = -1;
  if (options.costGuard && options.readOnly && explainable(sql, POSTGRES_NOT_EXPLAINABLE)) {
    explain = steps.length;
    // Text, first row only: the top node's line, `Node (cost=startup..total rows=n width=w)`.
    steps.push({ text: `EXPLAIN ${sql}`, values: params, firstRowOnly: true });
  }
  const statement = steps.length;
  steps.push({
    text: sql,
    values: params,
    answer: { maxRows: options.maxRows + 1, ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}) },
  });
  // Behind a pooler a write's deferred checks run before its COMMIT: a COMMIT that fails ends the
  // transaction, and the pooler may hand the backend, with what the call left in its session, to
  // another client before the clean-up reaches it. Failing here, the transaction stays open.
  if (pooled && !options.readOnly) steps.push({ text: 'SET CONSTRAINTS ALL IMMEDIATE' });
  let readBack = -1;
  if (names.length > 0) {
    readBack = steps.length;
    const checks = names.map((name, i) =>
      failUnless(`${current(name)} OPERATOR(pg_catalog.=) $${i + 1}`, changedMarker(name), current(name)),
    );
    // Code the statement ran may have changed the role (SET ROLE in a function's body) and kept it.
    if (options.separated) checks.push(roleCheck(ROLE_CHANGED_MARKER));
    steps.push({ text: `SELECT ${checks.join(', ')}`, values });
  }
  const end = steps.length;
  steps.push({ text: options.readOnly ? 'ROLLBACK' : 'COMMIT' }, { text: 'BEGIN' });
  for (const text of CLEANUP_STATEMENTS) steps.push({ text });
  // setseed() survives the transaction: a fresh seed, that no caller knows, for the next borrower.
  steps.push({ text: 'SELECT pg_catalog.setseed($1::pg_catalog.float8)', values: [freshSeed()] });
  if (pooled) steps.push({ text: REMOTE_DISCONNECT_ALL });
  const cleaned = steps.length;
  steps.push({ text: 'COMMIT' });
  const remoteLinks = pooled ? -1 : steps.length;
  if (!pooled) steps.push({ text: REMOTE_LINKS_PRESENT });
  return { steps, names, settings, resolve, statement, explain, readBack, end, cleaned, remoteLinks };
}

/**
 * The resolve step is planned on every call, and the walk's estimated cost is over the server's
 * default jit_above_cost (100,000) though it runs in a millisecond: compiling it took 150 ms a
 * call. JIT is off for that step only, in the call's transaction; JIT_BACK restores the value
 * the statement itself then runs with.
 */
const JIT_OFF = "pg_catalog.set_config('hanactl.jit', pg_catalog.current_setting('jit'), true), pg_catalog.set_config('jit', 'off', true)";
const JIT_BACK = "SELECT pg_catalog.set_config('jit', pg_catalog.current_setting('hanactl.jit'), true)";

/** What the statement step becomes when the cost guard refuses it: nothing runs, the steps keep their places. */
const NOTHING: BatchStep = { text: 'SELECT WHERE false' };

/**
 * The gate that holds the statement until its plan is read: over the limit, the statement step
 * is replaced by one that does nothing (the rest — read-back, ROLLBACK, cleanup — still runs)
 * and `refused` holds the estimate.
 */
export function costGate(plan: CallPlan, maxCost: number): BatchGate & { refused(): number | 'unknown' | undefined } {
  let refused: number | 'unknown' | undefined;
  return {
    step: plan.explain,
    decide(firstRow) {
      const estimate = postgresTopCost(firstRow?.[0] ?? null);
      const rest = plan.steps.slice(plan.explain + 1);
      if (estimate !== undefined && estimate <= maxCost) return rest;
      refused = estimate ?? 'unknown';
      return [NOTHING, ...rest.slice(1)];
    },
    refused: () => refused,
  };
}
