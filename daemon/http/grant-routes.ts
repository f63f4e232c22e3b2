import { Hono } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { GrantRequestSchema } from '../../shared/grant-schemas.js';
import type { GrantService } from '../grants/grant-service.js';
import { requireCli } from './require-cli.js';
import { readBody } from './validate.js';

const WHAT = `grant or revoke signed-in callers' access to connections (\`${cliCommand()} grant ...\`)`;

/** `GET|POST|DELETE /v1/grants`. Only the `hanactl` command line may call them: no agent grants itself access. */
export function grantRoutes(deps: { readonly grants: GrantService }): Hono {
  const app = new Hono();
  app.get('/grants', (c) => {
    requireCli(c, WHAT);
    return c.json({ grants: deps.grants.list() });
  });
  app.post('/grants', async (c) => {
    requireCli(c, WHAT);
    return c.json(deps.grants.grant(await readBody(c, GrantRequestSchema)));
  });
  app.delete('/grants', async (c) => {
    requireCli(c, WHAT);
    return c.json(deps.grants.revoke(await readBody(c, GrantRequestSchema)));
  });
  return app;
}
