import type { Context, MiddlewareHandler } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../shared/client-header.js';
import { HanactlError } from '../../shared/errors.js';
import { requestHeader } from './node-request.js';

/**
 * Refuses a request that does not come from the `hanactl` command line: what only a person
 * decides (connections, write access, trust, keys) is never reachable through the shim, which
 * serves the agent's tools. A guard against the agent's tools, not against a local attacker,
 * who could send any header to the user's own socket.
 */
export function requireCli(c: Context, what: string): void {
  if (c.req.header(CLIENT_HEADER) !== CLI_CLIENT_NAME) throw refusal(what);
}

function refusal(what: string): HanactlError {
  return new HanactlError('FORBIDDEN', `Only a person can ${what}, with the hanactl command line; no tool can.`);
}

/**
 * The routes an agent's client (the shim, MCP over HTTP) may call: what its tools need, nothing
 * more. Every other route, present or future, is the operator's.
 */
export const AGENT_ROUTES: readonly (readonly [method: string, path: RegExp])[] = [
  ['GET', /^\/v1\/health$/],
  ['GET', /^\/v1\/connections$/],
  ['GET', /^\/v1\/connections\/[^/]+$/],
  ['POST', /^\/v1\/query$/],
  ['POST', /^\/v1\/catalog\/[^/]+$/],
  ['POST', /^\/v1\/projects\/detect$/],
  ['POST', /^\/v1\/sessions$/],
  ['POST', /^\/v1\/sessions\/[^/]+$/],
  ['DELETE', /^\/v1\/sessions\/[^/]+$/],
];

/** What the operator's routes do, in the words of the refusal (the first match wins). */
const OPERATOR_WORDS: readonly (readonly [method: string, path: RegExp, what: string])[] = [
  ['POST', /^\/v1\/shutdown$/, `stop the daemon (\`${cliCommand()} daemon stop\`)`],
  ['GET', /^\/v1\/(status|pools|sessions)$/, `see the daemon's sessions and pools (\`${cliCommand()} status\`, \`${cliCommand()} pools\`)`],
  ['GET', /^\/v1\/audit$/, `read the audit trail (\`${cliCommand()} audit\`)`],
  ['*', /^\/v1\/queries(\/|$)/, `list, cancel, approve or deny the calls in flight (\`${cliCommand()} queries\`, \`${cliCommand()} cancel\`, \`${cliCommand()} approve\`, \`${cliCommand()} deny\`)`],
  ['POST', /^\/v1\/connections$/, `register a connection (\`${cliCommand()} add\`)`],
  ['POST', /^\/v1\/connections\/[^/]+\/settings$/, `change write access or context parameters (\`${cliCommand()} set\`)`],
  ['DELETE', /^\/v1\/connections\/[^/]+$/, `remove a connection (\`${cliCommand()} remove\`)`],
  ['POST', /^\/v1\/connections\/[^/]+\/test$/, `test a connection (\`${cliCommand()} test\`)`],
  ['POST', /^\/v1\/connections\/[^/]+\/context-sql$/, `see the SQL that installs the context signing key (\`${cliCommand()} context-sql\`)`],
  ['*', /^\/v1\/keys(\/|$)/, `change or export the registry key (\`${cliCommand()} key ...\`)`],
  ['*', /^\/v1\/tokens(\/|$)/, `create, list or revoke MCP over HTTP tokens (\`${cliCommand()} token ...\`)`],
  ['*', /^\/v1\/grants$/, `grant or revoke signed-in callers' access to connections (\`${cliCommand()} grant ...\`)`],
  ['POST', /^\/v1\/trust$/, 'trust a folder'],
  ['POST', /^\/v1\/trust\/remove$/, 'untrust a folder'],
  ['GET', /^\/v1\/trust$/, `list the trusted folders (\`${cliCommand()} trust\`)`],
  ['POST', /^\/v1\/projects\/import$/, 'copy a project connection into the registry'],
  ['GET', /^\/v1\/tools$/, `list curated tools (\`${cliCommand()} tools list\`)`],
  ['POST', /^\/v1\/connections\/[^/]+\/tools$/, `declare curated tools (\`${cliCommand()} tools import\`)`],
  ['DELETE', /^\/v1\/connections\/[^/]+\/tools\/[^/]+$/, `remove a curated tool (\`${cliCommand()} tools remove\`)`],
];

const matches =
  (method: string, path: string) =>
  ([m, p]: readonly [string, RegExp, ...unknown[]]) =>
    (m === '*' || m === method) && p.test(path);

/**
 * Deny by default: a request from anything but the command line reaches only AGENT_ROUTES; any
 * other route (stopping the daemon, the audit trail, other sessions' calls, keys, tokens, trust)
 * is refused before its handler runs, whatever route is added later.
 */
export function operatorOnly(): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    const path = c.req.path;
    // requestHeader reads the Node request directly: c.req.header() would build a Web Request for
    // every call, which costs time and takes over the client-gone signal the query routes use.
    if (requestHeader(c, CLIENT_HEADER) !== CLI_CLIENT_NAME && !AGENT_ROUTES.some(matches(method, path))) {
      throw refusal(OPERATOR_WORDS.find(matches(method, path))?.[2] ?? `call ${method} ${path}`);
    }
    await next();
  };
}
