import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { CLIENT_HEADER } from '../../shared/client-header.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import type { Health } from '../../shared/schemas.js';
import type { ApprovalDesk } from '../approvals/approval-desk.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { CatalogService } from '../catalog/index.js';
import type { CuratedService } from '../curated/curated-service.js';
import type { GrantService } from '../grants/index.js';
import type { KeyService } from '../keys/key-service.js';
import type { PoolManager } from '../pools/pool-manager.js';
import type { ProjectService } from '../projects/project-service.js';
import type { TrustStore } from '../projects/trust-store.js';
import type { CallTracker } from '../queries/call-tracker.js';
import type { QueryService } from '../queries/query-service.js';
import type { ConnectionService } from '../registry/connection-service.js';
import type { SessionTable } from '../sessions/session-table.js';
import type { TokenService } from '../tokens/index.js';
import { catalogRoutes } from './catalog-routes.js';
import { connectionRoutes } from './connection-routes.js';
import { connectionScope } from './connection-scope.js';
import { curatedRoutes } from './curated-routes.js';
import { grantRoutes } from './grant-routes.js';
import { keyRoutes } from './key-routes.js';
import { limitBody, MAX_BODY_BYTES, requestHeader } from './node-request.js';
import { operatorRoutes } from './operator-routes.js';
import { projectRoutes } from './project-routes.js';
import { queryRoutes } from './query-routes.js';
import { operatorOnly } from './require-cli.js';
import { sessionRoutes } from './session-routes.js';
import { tokenRoutes } from './token-routes.js';

/** Everything the routes use; the composition root (daemon/create-daemon.ts) builds it, routes construct nothing. */
export interface AppDeps {
  health(): Health;
  readonly connections: ConnectionService;
  readonly queries: QueryService;
  readonly catalog: CatalogService;
  readonly curated: CuratedService;
  readonly tokens: TokenService;
  readonly grants: GrantService;
  readonly sessions: SessionTable;
  readonly pools: Pick<PoolManager, 'stats'>;
  /** The writes waiting for a person (`/v1/queries/:id/approve|deny`). */
  readonly approvals: Pick<ApprovalDesk, 'decide'>;
  /** Tracks running calls (`/v1/queries`) and audits each. */
  readonly calls: CallTracker;
  /** The audit trail's read side (`/v1/audit`). */
  readonly audit: Pick<AuditLog, 'list'>;
  /** Project context (`project:<name>` connections, `/v1/projects/*`). */
  readonly projects: ProjectService;
  /** The folders a person trusted (`/v1/trust`, CLI only). */
  readonly trust: TrustStore;
  /** Registry key rotation and export (`/v1/keys/*`, CLI only). */
  readonly keys: KeyService;
  /** Runs before every request; throws to refuse it (the socket folder check). */
  readonly guard?: () => void;
  /** Asks the daemon to stop gracefully (answered before it stops). */
  shutdown(): void;
  /** True once the daemon is stopping: new work is refused at once (health, status and shutdown still answer). */
  stopping?(): boolean;
  /** Called when a client closed its connection mid-request: routine, for the log's info level, never an error. */
  onClientGone?(path: string): void;
  /** Called with every unexpected error, for the log. */
  onError?(err: unknown, path: string): void;
}

export { MAX_BODY_BYTES };

/** The daemon API under /v1. Pure: it never listens; tests call `app.request(...)`. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.onError((err, c) => {
    if (isHanactlError(err)) {
      if (err.details.rule === 'client-gone') deps.onClientGone?.(c.req.path);
      return c.json(err.toJSON(), err.status as ContentfulStatusCode);
    }
    deps.onError?.(err, c.req.path);
    const internal = new HanactlError('INTERNAL', 'The broker hit an unexpected error; it is logged in the daemon log.');
    return c.json(internal.toJSON(), 500);
  });
  app.notFound((c) => {
    const err = new HanactlError('NOT_FOUND', `No such endpoint: ${c.req.method} ${c.req.path}.`);
    return c.json(err.toJSON(), 404);
  });

  // The socket folder is the boundary against other local users: re-checked on every request.
  if (deps.guard) {
    const guard = deps.guard;
    app.use('*', async (_c, next) => {
      guard();
      await next();
    });
  }
  // A header no browser or SSRF relay sends unprompted (as Vault Agent's require_request_header).
  app.use('*', async (c, next) => {
    if (!requestHeader(c, CLIENT_HEADER)) {
      throw new HanactlError('FORBIDDEN', `Requests must carry the ${CLIENT_HEADER} header.`);
    }
    await next();
  });
  // What only a person may do is refused to the agent's clients before any handler runs.
  app.use('*', operatorOnly());
  app.use('*', limitBody);
  if (deps.stopping) {
    const stopping = deps.stopping;
    const answers = new Set(['/v1/health', '/v1/status', '/v1/shutdown']);
    app.use('*', async (c, next) => {
      if (stopping() && !answers.has(c.req.path)) {
        throw new HanactlError(
          'SHUTTING_DOWN',
          'The hanactl daemon is stopping and takes no new request; run the command again in a moment.',
        );
      }
      await next();
    });
  }
  app.use('*', connectionScope(deps.connections));

  app.get('/v1/health', (c) => c.json(deps.health()));
  app.get('/v1/pools', (c) => c.json({ pools: deps.pools.stats() }));
  app.get('/v1/status', (c) => c.json({ daemon: deps.health(), pools: deps.pools.stats(), sessions: deps.sessions.list() }));
  app.post('/v1/shutdown', (c) => {
    setImmediate(() => deps.shutdown());
    return c.json({ stopping: true });
  });
  app.route('/v1', connectionRoutes(deps));
  app.route('/v1', sessionRoutes(deps));
  app.route('/v1', queryRoutes(deps));
  app.route('/v1', operatorRoutes({ calls: deps.calls, audit: deps.audit, approvals: deps.approvals }));
  app.route('/v1', keyRoutes({ keys: deps.keys }));
  app.route('/v1', projectRoutes({ projects: deps.projects, trust: deps.trust, connections: deps.connections, sessions: deps.sessions }));
  app.route('/v1', catalogRoutes({ catalog: deps.catalog, sessions: deps.sessions, calls: deps.calls }));
  app.route('/v1', tokenRoutes({ tokens: deps.tokens }));
  app.route('/v1', grantRoutes({ grants: deps.grants }));
  app.route('/v1', curatedRoutes({ curated: deps.curated }));
  return app;
}
