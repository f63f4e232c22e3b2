import { Hono } from 'hono';
import { AddConnectionRequestSchema, UpdateConnectionRequestSchema } from '../../shared/schemas.js';
import { toConnectionInfo } from '../registry/connection-service.js';
import type { AppDeps } from './app.js';
import { readBody } from './validate.js';

/** `GET|POST|DELETE /v1/connections[/:name]`, `POST /v1/connections/:name/test`. */
export function connectionRoutes(deps: Pick<AppDeps, 'connections' | 'queries'>): Hono {
  const app = new Hono();
  app.get('/connections', (c) => c.json({ connections: deps.connections.list().map(toConnectionInfo) }));
  app.get('/connections/:name', (c) => c.json(toConnectionInfo(deps.connections.resolve(c.req.param('name')))));
  app.post('/connections', async (c) => {
    const body = await readBody(c, AddConnectionRequestSchema);
    const record = await deps.connections.add(body);
    return c.json(toConnectionInfo(record), 201);
  });
  app.post('/connections/:name/settings', async (c) => {
    const body = await readBody(c, UpdateConnectionRequestSchema);
    return c.json(toConnectionInfo(deps.connections.update(c.req.param('name'), body)));
  });
  app.delete('/connections/:name', async (c) => {
    await deps.connections.remove(c.req.param('name'));
    return c.json({ removed: c.req.param('name') });
  });
  app.post('/connections/:name/test', async (c) => {
    const name = c.req.param('name');
    const result = await deps.queries.test(name);
    return c.json({ name, ok: true, ...result });
  });
  return app;
}
