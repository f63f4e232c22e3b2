import type { WaitHooks } from '../../shared/approval.js';
import type {
  DescribeRequest,
  ExplainRequest,
  ExplainResult,
  RoutineList,
  RoutinesRequest,
  SampleRequest,
  SampleResult,
  SchemaList,
  SchemasRequest,
  SearchRequest,
  SearchResult,
  TableDescription,
  TableList,
  TablesRequest,
} from '../../shared/catalog-schemas.js';
import { HanactlError } from '../../shared/errors.js';
import { isProjectRef, type ProjectScope } from '../../shared/project-schemas.js';
import { MAX_PARAMS, MAX_SQL_LENGTH, type OpenSessionRequest, type QueryRequest, type SessionInfo } from '../../shared/schemas.js';
import type { Broker, CuratedCallRequest, SessionReport } from '../../shim/broker.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import type { CuratedService } from '../curated/curated-service.js';
import { parseWith } from '../http/validate.js';
import type { ProjectService } from '../projects/project-service.js';
import type { CallPerson, CallTracker } from '../queries/call-tracker.js';
import { CATALOG_OPS, type CatalogBody, type CatalogOp, trackCatalog } from '../queries/catalog-call.js';
import { trackQuery } from '../queries/query-call.js';
import type { QueryService } from '../queries/query-service.js';
import { type ConnectionService, toConnectionInfo } from '../registry/connection-service.js';
import type { SessionTable } from '../sessions/session-table.js';

/** The daemon's services the MCP tools use; the composition root passes its own. */
export interface BrokerServices {
  readonly connections: Pick<ConnectionService, 'list' | 'resolve'>;
  /** Project context (`project:<name>` connections, detect_project); without it a session has registry connections only. */
  readonly projects?: Pick<ProjectService, 'listing' | 'info' | 'detect' | 'forgetSession'>;
  readonly queries: Pick<QueryService, 'run'>;
  readonly catalog: CatalogService;
  readonly sessions: Pick<SessionTable, 'open' | 'touch' | 'close'>;
  /** Lists running calls (`hanactl queries`, `cancel`) and audits each. */
  readonly calls: Pick<CallTracker, 'track'>;
  /** Curated tools; without it a session offers none. */
  readonly curated?: Pick<CuratedService, 'forSession' | 'bind' | 'onChange'>;
}

/** How one session is listed: the id and pid it announced (a relay's), fixed by its transport. */
export interface BrokerSession {
  readonly id?: string;
  readonly pid?: number;
  /** Told of every change the session reports, to restore it after a daemon restart. */
  onReport?(id: string, report: SessionReport): void;
  /** The signed-in person the session belongs to (MCP over HTTP with OAuth): named in each call's audit record. */
  readonly person?: CallPerson;
}

const ENDED = new HanactlError('NOT_FOUND', 'This MCP session has ended.');

/**
 * The tools' Broker over the daemon's services, in process: no HTTP, JSON or schema round trip
 * between a tool and the service that answers it. Each call is tracked and audited exactly as
 * the daemon API's routes do it, and counted for its session in `hanactl status`.
 */
export class ServiceBroker implements Broker {
  readonly #services: BrokerServices;
  readonly #session: BrokerSession;
  #ended = false;

  constructor(services: BrokerServices, session: BrokerSession = {}) {
    this.#services = services;
    this.#session = session;
  }

  /** The caller of one tool call: its signal, and the session's signed-in person. */
  #caller(signal: AbortSignal | undefined) {
    return { signal, person: this.#session.person };
  }

  async listConnections(scope: ProjectScope) {
    const connections = this.#services.connections.list().map(toConnectionInfo);
    const { projects } = this.#services;
    if (!scope.project || !projects) return { connections };
    const found = projects.listing(scope);
    return { connections: [...connections, ...found.connections], project: found.project };
  }

  async getConnection(name: string, scope: ProjectScope = {}) {
    if (isProjectRef(name)) return this.#projects().info(name, scope);
    return toConnectionInfo(this.#services.connections.resolve(name));
  }

  query(request: QueryRequest, signal?: AbortSignal, approval?: WaitHooks) {
    // What the API's body schema adds to the tool's own: the sizes.
    if (request.sql.length > MAX_SQL_LENGTH)
      throw new HanactlError('INVALID_REQUEST', `Invalid request: sql: the statement is longer than ${MAX_SQL_LENGTH} characters.`);
    if ((request.params?.length ?? 0) > MAX_PARAMS)
      throw new HanactlError('INVALID_REQUEST', `Invalid request: params: at most ${MAX_PARAMS} values.`);
    const { queries } = this.#services;
    return trackQuery(this.#services, request, this.#caller(signal), (s, queryId) =>
      queries.run(request, s, { ...(queryId ? { queryId } : {}), ...(approval ? { approval } : {}) }),
    );
  }

  async curatedTools(connection: string | null) {
    return this.#services.curated?.forSession(connection) ?? { tools: [], curatedOnly: false };
  }

  /** A curated tool's call: its registered statement, bound, through the same tracking, audit and QueryService.run as run_query. */
  callCurated(request: CuratedCallRequest, signal?: AbortSignal, approval?: WaitHooks) {
    const { curated, queries } = this.#services;
    if (!curated) throw new HanactlError('NOT_FOUND', 'Curated tools are not available in this broker.');
    const { sql, params } = curated.bind(request.connection, request.tool, request.args);
    const query: QueryRequest = {
      connection: request.connection,
      sql,
      params,
      ...(request.session ? { session: request.session } : {}),
      ...(request.project ? { project: request.project } : {}),
      ...(request.context && Object.keys(request.context).length > 0 ? { context: { ...request.context } } : {}),
      tool: request.tool,
    };
    return trackQuery(this.#services, query, this.#caller(signal), (s, queryId) =>
      queries.run(query, s, { curated: true, ...(queryId ? { queryId } : {}), ...(approval ? { approval } : {}) }),
    );
  }

  onCuratedChange(listener: (connection: string) => void): () => void {
    return this.#services.curated?.onChange(listener) ?? (() => {});
  }

  listSchemas(request: SchemasRequest, signal?: AbortSignal) {
    return this.#catalogOp<SchemaList>('schemas', request, signal);
  }
  listTables(request: TablesRequest, signal?: AbortSignal) {
    return this.#catalogOp<TableList>('tables', request, signal);
  }
  describeTable(request: DescribeRequest, signal?: AbortSignal) {
    return this.#catalogOp<TableDescription>('describe', request, signal);
  }
  listRoutines(request: RoutinesRequest, signal?: AbortSignal) {
    return this.#catalogOp<RoutineList>('routines', request, signal);
  }
  explainQuery(request: ExplainRequest, signal?: AbortSignal) {
    return this.#catalogOp<ExplainResult>('explain', request, signal);
  }
  sampleRows(request: SampleRequest, signal?: AbortSignal) {
    return this.#catalogOp<SampleResult>('sample', request, signal);
  }
  searchObjects(request: SearchRequest, signal?: AbortSignal) {
    return this.#catalogOp<SearchResult>('search', request, signal);
  }

  async detectProject(request: Parameters<Broker['detectProject']>[0]) {
    // A detect queued before the socket closed must not list the session again, nor keep its extras.
    if (this.#ended) throw ENDED;
    if (request.session) this.#services.sessions.touch(request.session, { project: request.path });
    return this.#projects().detect(request);
  }

  #projects(): Pick<ProjectService, 'listing' | 'info' | 'detect'> {
    if (this.#services.projects) return this.#services.projects;
    throw new HanactlError('NOT_FOUND', 'Project context is not available in this broker.');
  }

  /** The session is over (its socket closed): later reports must not list it again. */
  end(): void {
    this.#ended = true;
  }

  async openSession(request: OpenSessionRequest): Promise<SessionInfo> {
    if (this.#ended) throw ENDED;
    const { id, pid } = this.#session;
    return this.#services.sessions.open({ ...request, ...(pid ? { pid } : {}) }, id);
  }

  async updateSession(id: string, report: SessionReport): Promise<SessionInfo> {
    if (this.#ended) throw ENDED;
    const { pinned: _pinned, ...update } = report;
    this.#session.onReport?.(id, report);
    return this.#services.sessions.touch(id, update);
  }

  /** Ends the session's listing and drops what it announced (its project extras). */
  async closeSession(id: string): Promise<boolean> {
    this.#services.projects?.forgetSession(id);
    return this.#services.sessions.close(id);
  }

  /** One catalog operation: checked with its shared schema (as on the daemon API: the tools' own stay lean), then run with its bookkeeping. */
  async #catalogOp<R>(op: CatalogOp, request: CatalogBody | object, signal: AbortSignal | undefined): Promise<R> {
    const body = parseWith(CATALOG_OPS[op].schema, request);
    return (await trackCatalog(this.#services, this.#services.catalog, op, body, this.#caller(signal))) as R;
  }
}
