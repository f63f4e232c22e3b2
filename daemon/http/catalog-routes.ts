import { Hono } from 'hono';
import type { z } from 'zod';
import {
  DescribeRequestSchema,
  ExplainRequestSchema,
  RoutinesRequestSchema,
  SampleRequestSchema,
  SchemasRequestSchema,
  SearchRequestSchema,
  TablesRequestSchema,
} from '../../shared/catalog-schemas.js';
import { HanactlError } from '../../shared/errors.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import type { CallTracker } from '../queries/call-tracker.js';
import { type CatalogOp, catalogCallInfo, summarizeCatalog } from '../queries/catalog-call.js';
import type { SessionTable } from '../sessions/session-table.js';
import { clientGone } from './node-request.js';
import { readBody } from './validate.js';

interface Op<S extends z.ZodType<{ session?: string | undefined }>> {
  readonly schema: S;
  readonly run: (catalog: CatalogService, body: z.infer<S>) => Promise<unknown>;
}

const op = <S extends z.ZodType<{ session?: string | undefined }>>(schema: S, run: Op<S>['run']): Op<S> => ({ schema, run });

/** Each operation's body schema and the service method that answers it. */
const OPS: Readonly<Record<string, Op<z.ZodType<{ session?: string | undefined }>>>> = {
  schemas: op(SchemasRequestSchema, (c, b) => c.schemas(b)),
  tables: op(TablesRequestSchema, (c, b) => c.tables(b)),
  describe: op(DescribeRequestSchema, (c, b) => c.describe(b)),
  routines: op(RoutinesRequestSchema, (c, b) => c.routines(b)),
  explain: op(ExplainRequestSchema, (c, b) => c.explain(b)),
  sample: op(SampleRequestSchema, (c, b) => c.sample(b)),
  search: op(SearchRequestSchema, (c, b) => c.search(b)),
};

export interface CatalogRouteDeps {
  readonly catalog: CatalogService;
  /** When given, each call is listed while it runs and audited when it ends, like run_query. */
  readonly calls?: Pick<CallTracker, 'track'>;
  /** When given, a body's `session` is counted as a call in the session table (`hanactl status`). */
  readonly sessions?: Pick<SessionTable, 'touch'>;
}

/**
 * `POST /v1/catalog/:op` (mount under `/v1`): schemas, tables, describe, routines, explain,
 * sample, search. Bodies are validated with the shared schemas; an unknown op is NOT_FOUND.
 */
export function catalogRoutes(deps: CatalogRouteDeps): Hono {
  const app = new Hono();
  app.post('/catalog/:op', async (c) => {
    const name = c.req.param('op');
    const found = Object.hasOwn(OPS, name) ? OPS[name] : undefined;
    if (!found) {
      throw new HanactlError('NOT_FOUND', `No catalog operation ${JSON.stringify(name)}; use one of ${Object.keys(OPS).join(', ')}.`);
    }
    const body = await readBody(c, found.schema);
    const session = body.session ? deps.sessions?.touch(body.session, {}, true) : undefined;
    const run = () => found.run(deps.catalog, body);
    if (!deps.calls) return c.json(await run());
    const info = catalogCallInfo(name as CatalogOp, body as Record<string, unknown> & { connection: string; project?: string }, session);
    return c.json(await deps.calls.track(info, clientGone(c), run, summarizeCatalog));
  });
  return app;
}
