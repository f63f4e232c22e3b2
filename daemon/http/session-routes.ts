import { Hono } from 'hono';
import { OpenSessionRequestSchema, SessionUpdateSchema } from '../../shared/schemas.js';
import type { AppDeps } from './app.js';
import { readBody } from './validate.js';

/** A shim announces itself, heartbeats, and says goodbye. */
export function sessionRoutes(deps: Pick<AppDeps, 'sessions'>): Hono {
  const app = new Hono();
  app.get('/sessions', (c) => c.json({ sessions: deps.sessions.list() }));
  app.post('/sessions', async (c) => c.json(deps.sessions.open(await readBody(c, OpenSessionRequestSchema)), 201));
  app.post('/sessions/:id', async (c) => c.json(deps.sessions.touch(c.req.param('id'), await readBody(c, SessionUpdateSchema))));
  app.delete('/sessions/:id', (c) => c.json({ closed: deps.sessions.close(c.req.param('id')) }));
  return app;
}
