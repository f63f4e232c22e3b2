import { Hono } from 'hono';
import { HanactlError } from '../../shared/errors.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import { CATALOG_OPS, catalogOp, trackCatalog } from '../queries/catalog-call.js';
import type { TrackedCallDeps } from '../queries/tracked-call.js';
import { clientGone } from './node-request.js';
import { readBody } from './validate.js';

export interface CatalogRouteDeps extends TrackedCallDeps {
  readonly catalog: CatalogService;
}

/**
 * `POST /v1/catalog/:op` (mount under `/v1`): schemas, tables, describe, routines, explain,
 * sample, search. Bodies are validated with the shared schemas; an unknown op is NOT_FOUND. With
 * a call tracker each call is listed while it runs, cancellable and audited, like run_query; a
 * body's `session` counts a call in the session table (`hanactl status`).
 */
export function catalogRoutes(deps: CatalogRouteDeps): Hono {
  const app = new Hono();
  app.post('/catalog/:op', async (c) => {
    const name = c.req.param('op');
    const op = catalogOp(name);
    if (!op) {
      throw new HanactlError(
        'NOT_FOUND',
        `No catalog operation ${JSON.stringify(name)}; use one of ${Object.keys(CATALOG_OPS).join(', ')}.`,
      );
    }
    const body = await readBody(c, CATALOG_OPS[op].schema);
    return c.json(await trackCatalog(deps, deps.catalog, op, body, { signal: clientGone(c) }));
  });
  return app;
}
