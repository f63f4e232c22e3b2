import { HanactlError } from '../../../shared/errors.js';

/**
 * Where rows are separated by context values, every call runs as the connection's login
 * (postgres-call.ts, LOGIN_ROLE_STEPS and roleCheck): the policies a person wrote for that login
 * are the ones that separate callers. What a new backend applies at start (miscinit.c,
 * process_settings: pg_db_role_setting, the login's and the database's defaults, `IN DATABASE`
 * and `ALL` ones included) can set `role` or `session_authorization`, and then `RESET ROLE`
 * returns to that role, not the login.
 */

/** The call could not be made to run as the login: nothing ran, and the connection is closed. */
export function notAsLogin(): HanactlError {
  return new HanactlError(
    'CONTEXT_UNAVAILABLE',
    "The call did not run: on this connection, whose rows are separated by context values, its session would run as a role other than the connection's login, so other policies than the login's would decide which rows it sees. A person should remove what sets it: a role default (ALTER ROLE <login> RESET role, and RESET session_authorization; also ALTER ROLE <login> IN DATABASE <db> RESET role, ALTER DATABASE <db> RESET role), or a proxy that logs in as another user.",
  );
}

/** Code the statement ran changed the role and kept it to the end of the statement: the result is refused and rolled back. */
export function roleChanged(): HanactlError {
  return new HanactlError(
    'CONTEXT_CHANGED',
    "The statement changed the role the call runs as (SET ROLE or SET SESSION AUTHORIZATION in code it ran), so its rows may be another role's; its result was refused and nothing it did was kept. Run it without changing the role.",
  );
}
