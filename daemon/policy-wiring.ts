import { cliCommand } from '../shared/cli-command.js';
import type { Engine } from '../shared/connection-url.js';
import { HanactlError } from '../shared/errors.js';
import type { StatementVerdict } from './catalog/catalog-service.js';
import type { OffThreadPolicy } from './policy/off-thread.js';
import type { StatementPolicy } from './query/query-service.js';

interface LoadedPolicy {
  readonly assertStatementAllowed: typeof import('./policy/index.js').assertStatementAllowed;
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
        assertStatementAllowed: policy.assertStatementAllowed,
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
        { rule: 'policy-unavailable', hint: `Restart the daemon (${cliCommand()} daemon stop, then ${cliCommand()} daemon start); if this persists, reinstall hanactl.` },
      );
    },
  );
  return loading;
}

/** The read-only validator's verdict on `sql` as a read (explain_query), once the policy has loaded. */
export function checkRead(sql: string, engine: Engine): StatementVerdict | Promise<StatementVerdict> {
  const judge = (policy: LoadedPolicy) => policy.checkStatement(sql, { dialect: engine, allowWrite: false });
  return loaded ? judge(loaded) : loadStatementPolicy().then(judge);
}

/**
 * The statement policy the daemon runs before borrowing a connection: the read-only
 * validator (skeletonize, then a chain of rules). The read-only session and the rolled-back
 * transaction are the layers behind it. Long statements are judged on a worker thread
 * (OffThreadPolicy), so that the daemon keeps answering meanwhile.
 */
export function createStatementPolicy(offThread?: OffThreadPolicy): StatementPolicy {
  let worker = offThread;
  const judge: StatementPolicy['check'] = (sql, options) => {
    const policy = loaded as LoadedPolicy;
    if (sql.length < policy.OFF_THREAD_CHARS) return policy.assertStatementAllowed(sql, options);
    worker ??= new policy.OffThreadPolicy();
    return worker.check(sql, options).then((verdict) => {
      if (!verdict.ok) throw new HanactlError('STATEMENT_REFUSED', verdict.message, { rule: verdict.rule, hint: verdict.hint });
      return verdict.kind;
    });
  };
  return {
    check: (sql, options) => (loaded ? judge(sql, options) : loadStatementPolicy().then(() => judge(sql, options))),
  };
}
