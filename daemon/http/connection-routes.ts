import { Hono } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import { isProjectRef } from '../../shared/project-schemas.js';
import { AddConnectionRequestSchema, ContextSqlRequestSchema, UpdateConnectionRequestSchema } from '../../shared/schemas.js';
import { costGuardUnavailable, ENGINE_TABLE } from '../engines/index.js';
import { toConnectionInfo } from '../registry/connection-service.js';
import type { AppDeps } from './app.js';
import { requireCli } from './require-cli.js';
import { readBody } from './validate.js';

/**
 * `GET|POST|DELETE /v1/connections[/:name]`, `POST /v1/connections/:name/test`. With
 * `?project=<path>[&session=<id>]` the listing adds the project's `project:<name>` connections
 * (and the project's status), and `GET /connections/project:<name>` resolves in that project.
 */
/**
 * Whether a connection's server gives plan costs is a fact of its version (MariaDB has none before
 * 11.0), so a cost limit on MySQL/MariaDB is set only after the server said which it is.
 */
async function assertServerEstimates(deps: Pick<AppDeps, 'connections' | 'queries'>, name: string): Promise<void> {
  const engine = deps.connections.resolve(name).target.engine;
  if (ENGINE_TABLE[engine].capabilities.costLimit !== 'by-server-version') return;
  let serverVersion: string | undefined;
  try {
    ({ serverVersion } = await deps.queries.test(name));
  } catch (err) {
    throw new HanactlError(
      'CONNECT_FAILED',
      `A cost limit on "${name}" needs its server's version (MariaDB gives no plan cost before 11.0), and the server did not answer: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const unavailable = costGuardUnavailable(engine, serverVersion);
  if (unavailable) throw new HanactlError('INVALID_REQUEST', `${unavailable} "${name}" keeps no cost limit.`);
}

export function connectionRoutes(deps: Pick<AppDeps, 'connections' | 'queries' | 'projects'>): Hono {
  const app = new Hono();
  app.get('/connections', (c) => {
    const connections = deps.connections.list().map(toConnectionInfo);
    const project = c.req.query('project');
    if (!project || !deps.projects) return c.json({ connections });
    const session = c.req.query('session');
    const found = deps.projects.listing({ project, ...(session ? { session } : {}) });
    return c.json({ connections: [...connections, ...found.connections], project: found.project });
  });
  app.get('/connections/:name', (c) => {
    const name = c.req.param('name');
    if (deps.projects && isProjectRef(name)) {
      const project = c.req.query('project');
      const session = c.req.query('session');
      return c.json(deps.projects.info(name, { ...(project ? { project } : {}), ...(session ? { session } : {}) }));
    }
    return c.json(toConnectionInfo(deps.connections.resolve(name)));
  });
  app.post('/connections', async (c) => {
    requireCli(c, `register a connection (\`${cliCommand()} add\`)`);
    const body = await readBody(c, AddConnectionRequestSchema);
    let advice: string[] | undefined;
    const test = async (candidate: Parameters<typeof deps.queries.testRecord>[0]) => {
      const result = await deps.queries.testRecord(candidate);
      advice = result.advice;
      return result;
    };
    const record = await deps.connections.add(body, body.test ? test : undefined);
    return c.json({ ...toConnectionInfo(record), ...(advice ? { advice } : {}) }, 201);
  });
  app.post('/connections/:name/settings', async (c) => {
    requireCli(c, `change write access or context parameters (\`${cliCommand()} set\`)`);
    const body = await readBody(c, UpdateConnectionRequestSchema);
    const name = c.req.param('name');
    if (typeof body.maxCost === 'number') await assertServerEstimates(deps, name);
    return c.json(toConnectionInfo(deps.connections.update(name, body)));
  });
  app.post('/connections/:name/context-sql', async (c) => {
    requireCli(c, `see the SQL that installs the context signing key (\`${cliCommand()} context-sql\`)`);
    const body = await readBody(c, ContextSqlRequestSchema);
    return c.json({ sql: deps.connections.contextSql(c.req.param('name'), body) });
  });
  app.delete('/connections/:name', async (c) => {
    requireCli(c, `remove a connection (\`${cliCommand()} remove\`)`);
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
