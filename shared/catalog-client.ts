import {
  type DescribeRequest,
  type ExplainRequest,
  type ExplainResult,
  ExplainResultSchema,
  type RoutineList,
  RoutineListSchema,
  type RoutinesRequest,
  type SampleRequest,
  type SampleResult,
  SampleResultSchema,
  type SchemaList,
  SchemaListSchema,
  type SchemasRequest,
  type SearchRequest,
  type SearchResult,
  SearchResultSchema,
  type TableDescription,
  TableDescriptionSchema,
  type TableList,
  TableListSchema,
  type TablesRequest,
} from './catalog-schemas.js';
import type { DaemonClient } from './daemon-client.js';

/**
 * The daemon's catalog API (`POST /v1/catalog/:op`) for the shim and the CLI. Answers are
 * checked against the shared schemas; failures arrive as HanactlError.
 */

export function listSchemas(client: Pick<DaemonClient, 'request'>, body: SchemasRequest, signal?: AbortSignal): Promise<SchemaList> {
  return client.request('POST', '/v1/catalog/schemas', body, SchemaListSchema, signal);
}

export function listTables(client: Pick<DaemonClient, 'request'>, body: TablesRequest, signal?: AbortSignal): Promise<TableList> {
  return client.request('POST', '/v1/catalog/tables', body, TableListSchema, signal);
}

export function describeTable(
  client: Pick<DaemonClient, 'request'>,
  body: DescribeRequest,
  signal?: AbortSignal,
): Promise<TableDescription> {
  return client.request('POST', '/v1/catalog/describe', body, TableDescriptionSchema, signal);
}

export function listRoutines(client: Pick<DaemonClient, 'request'>, body: RoutinesRequest, signal?: AbortSignal): Promise<RoutineList> {
  return client.request('POST', '/v1/catalog/routines', body, RoutineListSchema, signal);
}

export function explainQuery(client: Pick<DaemonClient, 'request'>, body: ExplainRequest, signal?: AbortSignal): Promise<ExplainResult> {
  return client.request('POST', '/v1/catalog/explain', body, ExplainResultSchema, signal);
}

export function sampleRows(client: Pick<DaemonClient, 'request'>, body: SampleRequest, signal?: AbortSignal): Promise<SampleResult> {
  return client.request('POST', '/v1/catalog/sample', body, SampleResultSchema, signal);
}

export function searchObjects(client: Pick<DaemonClient, 'request'>, body: SearchRequest, signal?: AbortSignal): Promise<SearchResult> {
  return client.request('POST', '/v1/catalog/search', body, SearchResultSchema, signal);
}
