/**
 * The daemon's whole graph in one process (createDaemon, the composition root), for tests that
 * drive the daemon API with `app.request(...)` and no socket: the encrypted registry and audit
 * trail in a folder the test owns, under a random key given as HANACTL_REGISTRY_KEY, the real
 * statement policy. Also the two ways these tests send a request.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Hono } from 'hono';
import pino from 'pino';
import { createDaemon, type Daemon, type DaemonConfig } from '../../daemon/create-daemon.js';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../shared/client-header.js';
import { resolvePaths } from '../../shared/paths.js';

export interface InProcessDaemon extends Daemon {
  /** What the daemon logged at error level ('unexpected error' and the like), oldest first: empty when all went as planned. */
  readonly errors: { readonly msg: string; readonly err?: string; readonly path?: string }[];
}

export interface InProcessOptions {
  readonly connectTimeoutMs?: number;
  readonly maxPools?: number;
  /** A recorded engine client behind the real pools (see DaemonConfig). */
  readonly loadDriverFactory?: DaemonConfig['loadDriverFactory'];
}

/** Builds the daemon's graph with `dir` as its home; nothing listens. `close()` leaves the folder to the test. */
export async function inProcessDaemon(dir: string, options: InProcessOptions = {}): Promise<InProcessDaemon> {
  const errors: InProcessDaemon['errors'] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  const env = { HANACTL_HOME: dir, HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') };
  const daemon = await createDaemon({
    paths: resolvePaths(env),
    env,
    settings: options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {},
    log,
    // No hana-cli connections: the person's own ~/.hana-cli stays out of the tests.
    hanaCliHome: join(dir, 'no-hana-cli'),
    ...(options.maxPools ? { maxPools: options.maxPools } : {}),
    ...(options.loadDriverFactory ? { loadDriverFactory: options.loadDriverFactory } : {}),
  });
  return { ...daemon, errors };
}

/** One request as sent, `body` as is; from the command line unless `headers` say otherwise (`{}`: no client header). */
export const request = (
  app: Hono,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { [CLIENT_HEADER]: CLI_CLIENT_NAME },
): Response | Promise<Response> =>
  app.request(path, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body } : {}) });

/** A JSON request from `client` (the command line by default): the status and the parsed answer, as `T`. */
export async function requestJson<T = Record<string, unknown>>(
  app: Hono,
  method: string,
  path: string,
  body?: unknown,
  client: string = CLI_CLIENT_NAME,
): Promise<{ status: number; body: T }> {
  const res = await request(app, method, path, body !== undefined ? JSON.stringify(body) : undefined, { [CLIENT_HEADER]: client });
  return { status: res.status, body: (await res.json()) as T };
}
