import { HanactlError } from '../../shared/errors.js';
import { scrubSecrets } from '../drivers/scrub.js';

/**
 * The database refused to place context values in the session (a missing privilege or object a
 * DBA must provide): said in one sentence for an operator, distinct from an ordinary query
 * failure, since no statement the agent could change would help.
 */
export function contextUnavailable(how: string, err: unknown, secrets: readonly (string | undefined)[] = []): HanactlError {
  const reason = scrubSecrets(err instanceof Error ? err.message : String(err), secrets);
  return new HanactlError(
    'CONTEXT_UNAVAILABLE',
    `The database refused to set this connection's context parameters with ${how} (${reason}); an operator must grant what it needs before calls on this connection can run.`,
  );
}
