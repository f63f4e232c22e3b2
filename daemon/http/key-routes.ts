import { Hono } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { ExportKeyRequestSchema, RotateKeyRequestSchema } from '../../shared/key-schemas.js';
import type { KeyService } from '../keys/key-service.js';
import { requireCli } from './require-cli.js';
import { readBody } from './validate.js';

/**
 * `POST /v1/keys/rotate` and `POST /v1/keys/export`. Only the `hanactl` command line may call
 * them: a guard against the agent's tools (the shim sends its own client name), not against a
 * local program of the same user, which could read the keychain itself.
 */
export function keyRoutes(deps: { readonly keys: KeyService }): Hono {
  const app = new Hono();
  app.post('/keys/rotate', async (c) => {
    requireCli(c, `change or export the registry key (\`${cliCommand()} key ...\`)`);
    return c.json(await deps.keys.rotate(await readBody(c, RotateKeyRequestSchema)));
  });
  app.post('/keys/export', async (c) => {
    requireCli(c, `change or export the registry key (\`${cliCommand()} key ...\`)`);
    const { passphrase } = await readBody(c, ExportKeyRequestSchema);
    return c.json(await deps.keys.exportRegistry(passphrase));
  });
  return app;
}
