import { Hono } from 'hono';
import { QueryRequestSchema } from '../../shared/schemas.js';
import type { AppDeps } from './app.js';
import { readBody } from './validate.js';

/** `POST /v1/query`: one statement for one session. */
export function queryRoutes(deps: Pick<AppDeps, 'queries' | 'sessions'>): Hono {
  const app = new Hono();
  app.post('/query', async (c) => {
    const body = await readBody(c, QueryRequestSchema);
    if (body.session) deps.sessions.touch(body.session, {}, true);
    const result = await deps.queries.run(body, c.req.raw.signal);
    return c.json(result);
  });
  return app;
}
