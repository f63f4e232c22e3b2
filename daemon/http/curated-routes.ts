import { Hono } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { CuratedImportRequestSchema } from '../../shared/curated.js';
import type { CuratedService } from '../curated/curated-service.js';
import { requireCli } from './require-cli.js';
import { readBody } from './validate.js';

/**
 * Curated tools: `GET /v1/tools[?connection=<name>]`, `POST /v1/connections/:name/tools`
 * (`{tools, replace?}`, what `hanactl tools import` sends), `DELETE /v1/connections/:name/tools/:tool`.
 * Only a person changes them, with the command line.
 */
export function curatedRoutes(deps: { curated: CuratedService }): Hono {
  const app = new Hono();
  app.get('/tools', (c) => {
    const connection = c.req.query('connection');
    return c.json({ tools: deps.curated.list(connection || undefined) });
  });
  app.post('/connections/:name/tools', async (c) => {
    requireCli(c, `declare curated tools (\`${cliCommand()} tools import\`)`);
    const body = await readBody(c, CuratedImportRequestSchema);
    return c.json({ tools: await deps.curated.import(c.req.param('name'), body) }, 201);
  });
  app.delete('/connections/:name/tools/:tool', (c) => {
    requireCli(c, `remove a curated tool (\`${cliCommand()} tools remove\`)`);
    deps.curated.remove(c.req.param('name'), c.req.param('tool'));
    return c.json({ removed: c.req.param('tool'), connection: c.req.param('name') });
  });
  return app;
}
