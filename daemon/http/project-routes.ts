import { basename } from 'node:path';
import { Hono } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { formatTarget } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import { trimWhere } from '../../shared/linear-text.js';
import { DetectRequestSchema, ImportRequestSchema, PROJECT_PREFIX, TrustRequestSchema } from '../../shared/project-schemas.js';
import type { ProjectService } from '../projects/project-service.js';
import type { TrustStore } from '../projects/trust-store.js';
import { type ConnectionService, toConnectionInfo } from '../registry/connection-service.js';
import type { SessionTable } from '../sessions/session-table.js';
import { requireCli } from './require-cli.js';
import { readBody } from './validate.js';

export interface ProjectRouteDeps {
  readonly projects: ProjectService;
  readonly trust: TrustStore;
  readonly connections: Pick<ConnectionService, 'add'>;
  readonly sessions?: Pick<SessionTable, 'touch'>;
}

/** A registry name for an imported connection: `<folder>-<name>`, letters, digits, - and _. */
function importName(root: string, ref: string): string {
  const folder = trimWhere(basename(root).replace(/[^A-Za-z0-9_-]+/g, '-'), (ch) => ch === '-');
  const name = ref.slice(PROJECT_PREFIX.length);
  return (folder ? `${folder}-${name}` : name).slice(0, 64);
}

/**
 * `POST /v1/projects/detect` (shim and CLI), `POST /v1/projects/import`, `GET|POST /v1/trust`
 * and `POST /v1/trust/remove` (CLI only). Mount under `/v1`.
 */
export function projectRoutes(deps: ProjectRouteDeps): Hono {
  const app = new Hono();
  app.post('/projects/detect', async (c) => {
    const body = await readBody(c, DetectRequestSchema);
    if (body.session) deps.sessions?.touch(body.session, { project: body.path });
    return c.json(deps.projects.detect(body));
  });
  app.post('/projects/import', async (c) => {
    requireCli(c, 'copy a project connection into the registry');
    const body = await readBody(c, ImportRequestSchema);
    const extras = body.connFile ? { connFile: body.connFile } : {};
    const found = deps.projects.detect({ path: body.path, ...extras });
    const ref = body.connection ?? found.primary;
    if (!ref) {
      throw new HanactlError(
        'CONNECTION_NOT_FOUND',
        `The project ${found.root} yields no connection; \`${cliCommand()} explain-project ${found.root}\` shows why.`,
      );
    }
    if (!ref.startsWith(PROJECT_PREFIX))
      throw new HanactlError('INVALID_REQUEST', `--connection takes a project connection (project:<name>), not "${ref}".`);
    const record = deps.projects.resolve(ref, { project: body.path }, extras);
    const added = await deps.connections.add({
      name: body.as ?? importName(found.root, ref),
      url: formatTarget(record.target),
      ...(record.password !== undefined ? { password: record.password } : {}),
      description: `Imported from ${record.source} (${found.root}).`,
      ...(body.replace ? { replace: true } : {}),
    });
    return c.json(toConnectionInfo(added), 201);
  });
  app.get('/trust', (c) => c.json({ trusted: deps.trust.list() }));
  app.post('/trust', async (c) => {
    requireCli(c, 'trust a folder');
    return c.json(deps.trust.trust((await readBody(c, TrustRequestSchema)).path));
  });
  app.post('/trust/remove', async (c) => {
    requireCli(c, 'untrust a folder');
    return c.json(deps.trust.untrust((await readBody(c, TrustRequestSchema)).path));
  });
  return app;
}
