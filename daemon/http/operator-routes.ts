import { Hono } from 'hono';
import { AuditQuerySchema, DEFAULT_AUDIT_LIMIT } from '../../shared/schemas.js';
import { parseSince } from '../../shared/since.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { CallTracker } from '../queries/call-tracker.js';
import { parseWith } from './validate.js';

export interface OperatorRouteDeps {
  readonly audit: Pick<AuditLog, 'list'>;
  readonly calls: Pick<CallTracker, 'list' | 'cancel'>;
}

/**
 * The operator's side (mount under `/v1`): `GET /audit?session&connection&since&after&limit`,
 * `GET /queries` (statements running now) and `POST /queries/:id/cancel`.
 */
export function operatorRoutes(deps: OperatorRouteDeps): Hono {
  const app = new Hono();
  app.get('/audit', (c) => {
    const q = parseWith(AuditQuerySchema, c.req.query());
    const records = deps.audit.list({
      limit: q.limit ?? DEFAULT_AUDIT_LIMIT,
      ...(q.session ? { session: q.session } : {}),
      ...(q.connection ? { connection: q.connection } : {}),
      ...(q.since ? { since: parseSince(q.since) } : {}),
      ...(q.after !== undefined ? { after: q.after } : {}),
    });
    return c.json({ records });
  });
  app.get('/queries', (c) => c.json({ queries: deps.calls.list() }));
  app.post('/queries/:id/cancel', async (c) => c.json(await deps.calls.cancel(c.req.param('id'))));
  return app;
}
