import { Hono } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { CreateTokenRequestSchema } from '../../shared/token-schemas.js';
import type { TokenService } from '../tokens/token-service.js';
import { requireCli } from './require-cli.js';
import { readBody } from './validate.js';

const WHAT = `create, list or revoke MCP over HTTP tokens (\`${cliCommand()} token ...\`)`;

/**
 * `GET|POST /v1/tokens`, `DELETE /v1/tokens/:label`. Only the `hanactl` command line may call
 * them: a token is a person's grant, never something an agent's tool can mint or read.
 */
export function tokenRoutes(deps: { readonly tokens: TokenService }): Hono {
  const app = new Hono();
  app.get('/tokens', (c) => {
    requireCli(c, WHAT);
    return c.json({ tokens: deps.tokens.list() });
  });
  app.post('/tokens', async (c) => {
    requireCli(c, WHAT);
    return c.json(deps.tokens.create(await readBody(c, CreateTokenRequestSchema)), 201);
  });
  app.delete('/tokens/:label', (c) => {
    requireCli(c, WHAT);
    const label = c.req.param('label');
    deps.tokens.revoke(label);
    return c.json({ revoked: label });
  });
  return app;
}
