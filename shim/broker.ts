import type { WaitHooks } from '../shared/approval.js';
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
} from '../shared/catalog-schemas.js';
import type { CuratedCallArgs, CuratedToolInfo } from '../shared/curated.js';
import type { DetectRequest, DetectResult, ProjectScope } from '../shared/project-schemas.js';
import type {
  ConnectionInfo,
  ConnectionList,
  OpenSessionRequest,
  QueryRequest,
  QueryResult,
  SessionInfo,
  SessionUpdate,
} from '../shared/schemas.js';

/** One call of a curated tool: its connection, name and the agent's arguments. */
export interface CuratedCallRequest {
  readonly connection: string;
  readonly tool: string;
  readonly args: CuratedCallArgs;
  readonly session?: string;
  readonly project?: string;
  readonly context?: Readonly<Record<string, string>>;
}

/** What a session reports of itself for `hanactl status`, plus what the daemon keeps to resume it after a restart. */
export interface SessionReport extends SessionUpdate {
  /** True once the agent chose a registry connection itself (a change of project keeps it). */
  readonly pinned?: boolean;
}

/**
 * What the MCP tools need of the daemon: exactly its services, called in process
 * (daemon/mcp/service-broker.ts implements it). Calls are tracked (`hanactl queries`,
 * `hanactl cancel`), audited and cancelled through `signal`; failures are HanactlError.
 */
export interface Broker {
  /** Registry connections, plus the project's (`project:<name>`) when the scope names a project. */
  listConnections(scope: ProjectScope): Promise<ConnectionList>;
  getConnection(name: string, scope?: ProjectScope): Promise<ConnectionInfo>;
  /** `approval`: told when a write waits for a person (`hanactl set --approve-writes`), to ask in the editor too. */
  query(request: QueryRequest, signal?: AbortSignal, approval?: WaitHooks): Promise<QueryResult>;
  listSchemas(request: SchemasRequest, signal?: AbortSignal): Promise<SchemaList>;
  listTables(request: TablesRequest, signal?: AbortSignal): Promise<TableList>;
  describeTable(request: DescribeRequest, signal?: AbortSignal): Promise<TableDescription>;
  listRoutines(request: RoutinesRequest, signal?: AbortSignal): Promise<RoutineList>;
  explainQuery(request: ExplainRequest, signal?: AbortSignal): Promise<ExplainResult>;
  sampleRows(request: SampleRequest, signal?: AbortSignal): Promise<SampleResult>;
  searchObjects(request: SearchRequest, signal?: AbortSignal): Promise<SearchResult>;
  /** The project holding `path`, its sources and the connections they yield (names and engines only). */
  detectProject(request: DetectRequest): Promise<DetectResult>;
  /**
   * The curated tools a session whose active connection is `connection` offers (those that fit
   * tools/list), and whether the connection is curated-only (run_query not offered).
   */
  curatedTools(connection: string | null): Promise<{ tools: CuratedToolInfo[]; curatedOnly: boolean }>;
  /** Runs a curated tool: the daemon binds its registered statement and runs it as run_query runs SQL. */
  callCurated(request: CuratedCallRequest, signal?: AbortSignal, approval?: WaitHooks): Promise<QueryResult>;
  /** Calls `listener` with a connection's name when a person changes its curated tools or settings; returns the unsubscribe. */
  onCuratedChange?(listener: (connection: string) => void): () => void;
  /** Lists the session in `hanactl status`. */
  openSession(request: OpenSessionRequest): Promise<SessionInfo>;
  updateSession(id: string, report: SessionReport): Promise<SessionInfo>;
  closeSession(id: string): Promise<unknown>;
}
