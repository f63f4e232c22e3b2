import { Hono } from 'hono';
import { QueryRequestSchema } from '../../shared/schemas.js';
import { trackQuery } from '../queries/query-call.js';
import type { AppDeps } from './app.js';
import { clientGone } from './node-request.js';
import { readBody } from './validate.js';

/**
 * `POST /v1/query`: one statement for one session. The request's signal aborts when the client
 * goes away (@hono/node-server aborts it when the response closes unfinished); with a call
 * tracker the call is also listed, cancellable by id, and audited.
 */
export function queryRoutes(deps: Pick<AppDeps, 'queries' | 'sessions' | 'calls'>): Hono {
  const app = new Hono();
  app.post('/query', async (c) => {
    const body = await readBody(c, QueryRequestSchema);
    const run = (signal: AbortSignal | undefined, queryId?: string) =>
      deps.queries.run(body, signal, queryId === undefined ? {} : { queryId });
    return c.json(await trackQuery(deps, body, { signal: clientGone(c) }, run));
  });
  return app;
}
