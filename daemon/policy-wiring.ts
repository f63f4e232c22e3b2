import { cliCommand } from '../shared/cli-command.js';
import type { Engine } from '../shared/connection-url.js';
import { HanactlError } from '../shared/errors.js';
import type { StatementVerdict } from './catalog/catalog-service.js';
import type { OffThreadPolicy } from './policy/off-thread.js';
import type { PolicyOptions, Verdict } from './policy/types.js';
import { VerdictCache } from './policy/verdict-cache.js';
import type { Checked, StatementPolicy } from './queries/query-service.js';

interface LoadedPolicy {
  readonly checkStatement: typeof import('./policy/index.js').checkStatement;
  readonly OFF_THREAD_CHARS: number;
  readonly OffThreadPolicy: typeof OffThreadPolicy;
}

let loaded: LoadedPolicy | undefined;
let loading: Promise<LoadedPolicy> | undefined;

/**
 * Loads the statement policy once. It is not imported with the daemon: PostgreSQL's parser is
 * WebAssembly that takes hundreds of milliseconds to load on a busy machine, and a restarted
 * daemon should listen first. Every check awaits this, so no statement ever runs unchecked;
 * if the policy cannot load, every statement is refused.
 */
export function loadStatementPolicy(): Promise<LoadedPolicy> {
  loading ??= Promise.all([import('./policy/index.js'), import('./policy/off-thread.js')]).then(
    ([policy, offThread]) => {
      loaded = {
        checkStatement: policy.checkStatement,
        OFF_THREAD_CHARS: offThread.OFF_THREAD_CHARS,
        OffThreadPolicy: offThread.OffThreadPolicy,
      };
      return loaded;
    },
    (err: unknown) => {
      throw new HanactlError(
        'STATEMENT_REFUSED',
        `Refused: the daemon could not load its statement policy (${err instanceof Error ? err.message : String(err)}), so it runs no statement.`,
        {
          rule: 'policy-unavailable',
          hint: `Restart the daemon (${cliCommand()} daemon stop, then ${cliCommand()} daemon start); if this persists, reinstall hanactl.`,
        },
      );
    },
  );
  return loading;
}

/** The worker thread the daemon's checks share (started by the first long statement). */
let sharedWorker: OffThreadPolicy | undefined;

/** Verdicts on short statements the daemon's checks share (run_query and explain_query alike). */
const sharedVerdicts = new VerdictCache();

/**
 * The verdict on the loop for a short statement, from `verdicts` when the same text was judged
 * under the same options before; on the worker thread for a long one (OFF_THREAD_CHARS), never kept.
 */
function verdictOf(
  policy: LoadedPolicy,
  sql: string,
  options: PolicyOptions,
  worker: () => OffThreadPolicy,
  verdicts: VerdictCache,
): Verdict | Promise<Verdict> {
  const judge = (text: string, judged: PolicyOptions) => policy.checkStatement(text, judged, true);
  return sql.length < policy.OFF_THREAD_CHARS ? verdicts.verdict(sql, options, judge) : worker().check(sql, options);
}

/** The accepted statement's kind, and what it names (PostgreSQL), or the refusal thrown. */
function refusedUnless(verdict: Verdict): Checked {
  if (!verdict.ok) throw new HanactlError('STATEMENT_REFUSED', verdict.message, { rule: verdict.rule, hint: verdict.hint });
  return verdict.references ? { kind: verdict.kind, references: verdict.references } : verdict.kind;
}

/**
 * The read-only validator's verdict on `sql` as a read (explain_query, sample_rows), once the
 * policy has loaded; long statements on the worker thread, as for run_query. `rowSeparation`: the
 * connection separates rows, so the rules for such connections apply too.
 */
export function createReadCheck(
  offThread?: OffThreadPolicy,
  verdicts: VerdictCache = sharedVerdicts,
): (sql: string, engine: Engine, options?: { readonly rowSeparation?: boolean }) => StatementVerdict | Promise<StatementVerdict> {
  return (sql, engine, options) => {
    const judge = (policy: LoadedPolicy) =>
      verdictOf(
        policy,
        sql,
        { dialect: engine, allowWrite: false, ...(options?.rowSeparation ? { rowSeparation: true } : {}) },
        () => offThread ?? (sharedWorker ??= new policy.OffThreadPolicy()),
        verdicts,
      );
    return loaded ? judge(loaded) : loadStatementPolicy().then(judge);
  };
}

/** The read check the daemon uses (see createReadCheck). */
export const checkRead = createReadCheck();

/**
 * The statement policy the daemon runs before borrowing a connection: the read-only
 * validator (skeletonize, then a chain of rules). The read-only session and the rolled-back
 * transaction are the layers behind it. Long statements are judged on a worker thread
 * (OffThreadPolicy), so that the daemon keeps answering meanwhile.
 */
export function createStatementPolicy(offThread?: OffThreadPolicy, verdicts: VerdictCache = sharedVerdicts): StatementPolicy {
  const judge: StatementPolicy['check'] = (sql, options) => {
    const policy = loaded as LoadedPolicy;
    const verdict = verdictOf(policy, sql, options, () => offThread ?? (sharedWorker ??= new policy.OffThreadPolicy()), verdicts);
    return 'then' in verdict ? verdict.then(refusedUnless) : refusedUnless(verdict);
  };
  return {
    check: (sql, options) => (loaded ? judge(sql, options) : loadStatementPolicy().then(() => judge(sql, options))),
  };
}
