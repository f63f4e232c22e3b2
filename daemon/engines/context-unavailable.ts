import { HanactlError } from '../../shared/errors.js';
import { maskDriverText } from './scrub.js';

/**
 * The database refused to place context values in the session (a missing privilege or object a
 * DBA must provide): said in one sentence for an operator, distinct from an ordinary query
 * failure, since no statement the agent could change would help. The server's reason may quote
 * the values, which the caller chose, so it is masked by shape only, as a statement's error is
 * (scrub.ts): never by a password's value.
 */
export function contextUnavailable(how: string, err: unknown): HanactlError {
  const reason = maskDriverText(err instanceof Error ? err.message : String(err));
  return new HanactlError(
    'CONTEXT_UNAVAILABLE',
    `The database refused to set this connection's context parameters with ${how} (${reason}); an operator must grant what it needs before calls on this connection can run.`,
  );
}

/**
 * Read back just before the statement, a context parameter did not hold the value this call
 * set: the statement does not run, since it would run under someone else's scope (or none).
 */
export function contextNotKept(name: string, how: string): HanactlError {
  return new HanactlError(
    'CONTEXT_UNAVAILABLE',
    `The context parameter ${name} did not read back as the value just set with ${how}, so the statement did not run; an operator should check what in the database changes it (a trigger, a login hook, a proxy).`,
  );
}

/**
 * The check each driver makes with the values it read back, in `names` order, just before the
 * statement: the first parameter that differs stops the call (`how` says how they were set).
 */
export function assertContextKept(
  names: readonly string[],
  wanted: Readonly<Record<string, string>>,
  readBack: readonly unknown[],
  how: string,
): void {
  const [wrong] = contextMismatches(names, wanted, readBack);
  if (wrong !== undefined) throw contextNotKept(wrong, how);
}

/**
 * Read back after the statement, a context parameter no longer held the value this call set:
 * the statement itself changed it (`set_config`, `SET @mcp_...`, `:=`), so its rows may belong to
 * another scope. The result is refused and a write is rolled back.
 */
export function contextChanged(name: string, how: string): HanactlError {
  return new HanactlError(
    'CONTEXT_CHANGED',
    `The statement changed the context parameter ${name} (set with ${how}); its result was refused and nothing it did was kept. Context values are fixed for a session; run the statement without changing them.`,
  );
}

/** The check after the statement: the first parameter whose value changed refuses the result. */
export function assertContextUnchanged(
  names: readonly string[],
  wanted: Readonly<Record<string, string>>,
  readBack: readonly unknown[],
  how: string,
): void {
  const [changed] = contextMismatches(names, wanted, readBack);
  if (changed !== undefined) throw contextChanged(changed, how);
}

/** The names whose read-back value differs from the one set (a name set to nothing must read back NULL). */
export function contextMismatches(
  names: readonly string[],
  wanted: Readonly<Record<string, string>>,
  readBack: readonly unknown[],
): string[] {
  return names.filter((name, i) => {
    const got = readBack[i];
    const want = wanted[name];
    return want === undefined ? got !== null && got !== undefined && got !== '' : got !== want;
  });
}
