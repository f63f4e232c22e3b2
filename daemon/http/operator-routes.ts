import { Hono } from 'hono';
import { HanactlError } from '../../shared/errors.js';
import { ApprovalRequestSchema, AuditQuerySchema, DEFAULT_AUDIT_LIMIT } from '../../shared/schemas.js';
import { parseSince } from '../../shared/since.js';
import type { ApprovalDesk } from '../approvals/approval-desk.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { CallTracker } from '../queries/call-tracker.js';
import { parseWith, readBody } from './validate.js';

export interface OperatorRouteDeps {
  readonly audit: Pick<AuditLog, 'list'>;
  readonly calls: Pick<CallTracker, 'list' | 'cancel'>;
  /** Writes waiting for a person; without it approve and deny find none. */
  readonly approvals?: Pick<ApprovalDesk, 'decide'>;
}

/**
 * The operator's side (mount under `/v1`): `GET /audit?session&connection&since&after&limit`,
 * `GET /queries` (statements running now, writes waiting for a person), `POST /queries/:id/cancel`,
 * and `POST /queries/:id/approve|deny` `{user?, reason?}` for a waiting write.
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
  for (const verb of ['approve', 'deny'] as const) {
    app.post(`/queries/:id/${verb}`, async (c) => {
      const body = await readBody(c, ApprovalRequestSchema);
      const id = c.req.param('id');
      const desk = deps.approvals;
      const answer = { approve: verb === 'approve', by: 'cli' as const, who: body.user ?? null, reason: body.reason };
      if (!desk) throw new HanactlError('NOT_FOUND', `No write with id ${JSON.stringify(id)} is waiting for approval.`);
      const { pending, decision } = desk.decide(id, answer);
      return c.json({ id, connection: pending.connection, sql: pending.sql, params: pending.params, decision });
    });
  }
  return app;
}
