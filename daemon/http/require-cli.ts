import type { Context } from 'hono';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../shared/client-header.js';
import { HanactlError } from '../../shared/errors.js';

/**
 * Refuses a request that does not come from the `hanactl` command line: what only a person
 * decides (connections, write access, trust, keys) is never reachable through the shim, which
 * serves the agent's tools. A guard against the agent's tools, not against a local attacker,
 * who could send any header to the user's own socket.
 */
export function requireCli(c: Context, what: string): void {
  if (c.req.header(CLIENT_HEADER) !== CLI_CLIENT_NAME) {
    throw new HanactlError('FORBIDDEN', `Only a person can ${what}, with the hanactl command line; no tool can.`);
  }
}
