import type { CatalogExecutor, CatalogRow } from '../../daemon/catalog/catalog.js';
import type { ExecuteOptions } from '../../daemon/engines/driver.js';
import { planCall, planOpening } from '../../daemon/engines/postgres/postgres-call.js';
import { PostgresCatalog } from '../../daemon/engines/postgres/postgres-catalog.js';
import { CLEANUP_STATEMENTS, REMOTE_LINKS_PRESENT, scrubMessage } from '../../daemon/engines/postgres/postgres-cleanup.js';
import { PostgresConnection, TERMINATE_BACKEND } from '../../daemon/engines/postgres/postgres-connection.js';
import { SESSION_FACTS } from '../../daemon/engines/postgres/postgres-driver.js';
import { POSTGRES_PRIVILEGE_PROBE } from '../../daemon/engines/postgres/postgres-privileges.js';
import { type ResolveStage, resolveStep, walkFinding } from '../../daemon/engines/postgres/postgres-resolve.js';
import type { PgClient } from '../../daemon/engines/postgres/postgres-types.js';
import type { StatementReferences } from '../../daemon/policy/types.js';

const AGENT_SQL = 'SELECT 1';

/** Every resolve step and walk hanactl can send: each stage, separated or not, read or write, every kind of name. */
function resolveTexts(): Map<string, string> {
  const out = new Map<string, string>();
  const everything: StatementReferences = {
    relations: ['"public"."t"'],
    functions: ['f'],
    operators: ['==>'],
    types: ['t'],
    attributes: ['pg_terminate_backend'],
  };
  for (const stage of ['first', 'view', 'walk'] as ResolveStage[])
    for (const separated of [false, true])
      for (const readOnly of [false, true])
        for (const written of [undefined, ['"public"."t"']]) {
          const references = { ...everything, separated, readOnly, ...(written ? { written } : {}) };
          const step = resolveStep(references, stage);
          if (step) out.set(`resolve ${stage} separated=${separated} readOnly=${readOnly} written=${written !== undefined}`, step.text);
          out.set(`walkFinding separated=${separated}`, walkFinding(references).text);
        }
  // A root named as a refused relation goes to the walk from the first stage.
  const refused = resolveStep({ relations: ['"pg_catalog"."pg_authid"'], functions: [] }, 'first');
  if (refused) out.set('resolve refused root', refused.text);
  return out;
}

/** Every step of a call but the agent's own statement (and the cost guard's EXPLAIN of it). */
function callTexts(): Map<string, string> {
  const out = new Map<string, string>();
  const key = Buffer.alloc(32, 7);
  for (const readOnly of [true, false])
    for (const separated of [false, true])
      for (const context of [{}, { CUSTOMER_ID: '42' }])
        for (const signed of [false, true])
          for (const pooled of [false, true])
            for (const checksClient of [false, true]) {
              const options: ExecuteOptions = {
                maxRows: 10,
                timeoutMs: 1000,
                readOnly,
                separated,
                context,
                ...(signed ? { contextKey: key } : {}),
                costGuard: { maxCost: 10, unavailable: () => new Error('x'), over: () => new Error('x') },
                references: { relations: ['"t"'], functions: ['f'], readOnly, separated },
              } as unknown as ExecuteOptions;
              const plan = planCall(AGENT_SQL, [], options, 123, false, checksClient, 'first', pooled);
              plan.steps.forEach((step, i) => {
                if (i !== plan.statement && i !== plan.explain) out.set(`call step ${i} (${step.text.slice(0, 40)})`, step.text);
              });
              for (const step of planOpening(options)) out.set(`opening ${step.text.slice(0, 40)}`, step.text);
            }
  return out;
}

/** Every statement the catalog tools send, recorded by an executor that answers each with a row. */
async function catalogTexts(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const catalog = new PostgresCatalog();
  const run: CatalogExecutor = async (sql) => {
    if (!sql.endsWith(AGENT_SQL)) out.set(`catalog ${sql.slice(0, 60)}`, sql);
    return [{ name: 'x', total: 1, oid: 5, what: null } as CatalogRow];
  };
  const table = { schema: 's', table: 't', kind: 'table', comment: null, handle: 16500 };
  await catalog.currentSchema(run);
  await catalog.listSchemas(run, { limit: 5 });
  await catalog.listSchemas(run, { pattern: 'a', limit: 5 });
  await catalog.listTables(run, { schema: 's', limit: 5 });
  await catalog.listTables(run, { schema: 's', pattern: 'a', limit: 5 });
  await catalog.findTables(run, 's', 't');
  await catalog.describeTable(run, table);
  await catalog.listRoutines(run, { schema: 's', limit: 5 });
  await catalog.listRoutines(run, { schema: 's', pattern: 'a', limit: 5 });
  await catalog.search(run, { pattern: 'a', kinds: ['table', 'view', 'routine', 'column'], limit: 5 });
  await catalog.search(run, { pattern: 'a', kinds: ['column'], limit: 5 });
  await catalog.refusedRead(run, table, false);
  await catalog.refusedRead(run, table, true);
  await catalog.explain(run, AGENT_SQL);
  out.set('sample_rows', catalog.sampleStatement(table, 5).sql);
  return out;
}

/** What a connection sends outside a call: its cancel from a second session, its ping, its version. */
async function connectionTexts(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const client = (): PgClient =>
    ({
      processID: 77,
      on() {},
      async query(text: string | { text: string }) {
        const sql = typeof text === 'string' ? text : text.text;
        out.set(`connection ${sql}`, sql);
        return { rows: [{ server_version: '17' }] };
      },
      async end() {},
      async connect() {},
    }) as unknown as PgClient;
  const connection = new PostgresConnection(client(), { prepareValue: (v) => v as string, rowParser: () => ({}) as never }, async () =>
    client(),
  );
  await connection.cancel();
  await connection.ping();
  await connection.serverVersion();
  out.set('terminate', TERMINATE_BACKEND);
  out.set('session facts', SESSION_FACTS);
  return out;
}

/** Every statement hanactl sends on PostgreSQL but the agent's own, by where it comes from. */
export async function everyText(): Promise<Map<string, string>> {
  const out = new Map<string, string>([
    ['privilege probe', POSTGRES_PRIVILEGE_PROBE.sql],
    ['separation probe', POSTGRES_PRIVILEGE_PROBE.separation?.sql ?? ''],
    ['database probe', POSTGRES_PRIVILEGE_PROBE.database?.sql ?? ''],
    ['remote links present', REMOTE_LINKS_PRESENT],
    ['scrub', scrubMessage('0.5')],
    ...CLEANUP_STATEMENTS.map((text): [string, string] => [`cleanup ${text}`, text]),
  ]);
  for (const part of [resolveTexts(), callTexts(), await catalogTexts(), await connectionTexts()]) for (const [k, v] of part) out.set(k, v);
  return out;
}
