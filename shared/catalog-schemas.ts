import { z } from 'zod';
import { ConnectionRefSchema, MAX_SQL_LENGTH, ResultCutSchema } from './schemas.js';

/**
 * Bodies and answers of `POST /v1/catalog/:op`. Daemon, shim and CLI parse with these.
 *
 * Names (`schema`, `table`) are exact catalog names, bound as parameters by the daemon and
 * never concatenated into SQL; `describe` and `sample` also accept a unique case-insensitive
 * match. Patterns are SQL LIKE patterns matched case-insensitively: `%` is any run of
 * characters, `_` any one character; a pattern without `%` is a substring search.
 */

/** Catalog lists answer at most this many rows unless the request asks otherwise. */
export const DEFAULT_CATALOG_LIMIT = 200;
export const MAX_CATALOG_LIMIT = 1000;
export const DEFAULT_SAMPLE_ROWS = 10;
export const MAX_SAMPLE_ROWS = 100;

/** A schema, table or view name as the agent typed it: no control characters, at most 256 characters. */
export const IdentifierSchema = z
  .string()
  .min(1)
  .max(256)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'no control characters');

export const NamePatternSchema = z.string().min(1).max(128);
const LimitSchema = z.number().int().min(1).max(MAX_CATALOG_LIMIT);

export const ObjectKindSchema = z.enum(['table', 'view', 'column', 'routine']);
export type ObjectKind = z.infer<typeof ObjectKindSchema>;

/**
 * Every body: the connection, the shim's session (counted in `hanactl status`), and the context
 * parameter values from the shim's configuration (never from the agent), set in the database
 * session for the catalog's statements exactly as for run_query.
 */
const base = {
  connection: ConnectionRefSchema,
  session: z.string().max(100).optional(),
  /** The shim's project folder, so `project:<name>` connections resolve. */
  project: z.string().max(4096).optional(),
  context: z.record(z.string().max(64), z.string().max(65_536)).optional(),
};

export const SchemasRequestSchema = z.strictObject({ ...base, pattern: NamePatternSchema.optional(), limit: LimitSchema.optional() });
export type SchemasRequest = z.infer<typeof SchemasRequestSchema>;

export const TablesRequestSchema = z.strictObject({
  ...base,
  schema: IdentifierSchema.optional(),
  pattern: NamePatternSchema.optional(),
  limit: LimitSchema.optional(),
});
export type TablesRequest = z.infer<typeof TablesRequestSchema>;

export const DescribeRequestSchema = z.strictObject({ ...base, table: IdentifierSchema, schema: IdentifierSchema.optional() });
export type DescribeRequest = z.infer<typeof DescribeRequestSchema>;

export const RoutinesRequestSchema = TablesRequestSchema;
export type RoutinesRequest = z.infer<typeof RoutinesRequestSchema>;

export const ExplainRequestSchema = z.strictObject({ ...base, sql: z.string().min(1, 'sql is empty').max(MAX_SQL_LENGTH) });
export type ExplainRequest = z.infer<typeof ExplainRequestSchema>;

export const SampleRequestSchema = z.strictObject({
  ...base,
  table: IdentifierSchema,
  schema: IdentifierSchema.optional(),
  limit: z.number().int().min(1).max(MAX_SAMPLE_ROWS).optional(),
});
export type SampleRequest = z.infer<typeof SampleRequestSchema>;

export const SearchRequestSchema = z.strictObject({
  ...base,
  pattern: NamePatternSchema,
  kinds: z.array(ObjectKindSchema).min(1).max(4).optional(),
  limit: LimitSchema.optional(),
});
export type SearchRequest = z.infer<typeof SearchRequestSchema>;

/** Present when the daemon cut an answer to the connection's byte cap (`ResultCut.note` says what). */
const cut = { cut: ResultCutSchema.optional() };

/** Shared by every capped list: `total` rows matched, `truncated` when fewer were returned. */
const capped = { total: z.number().int(), truncated: z.boolean(), ...cut };

export const SchemaListSchema = z.object({ current: z.string().nullable(), schemas: z.array(z.string()), ...capped });
export type SchemaList = z.infer<typeof SchemaListSchema>;

export const TableInfoSchema = z.object({
  name: z.string(),
  /** `table`, `view`, `materialized view`, `foreign table`, `virtual`, `sequence` ... */
  kind: z.string(),
  /** The engine's cheap estimate (statistics), not a count; null where the engine has none. */
  rowEstimate: z.number().nullable(),
  comment: z.string().nullable(),
});
export type TableInfo = z.infer<typeof TableInfoSchema>;

export const TableListSchema = z.object({ schema: z.string(), tables: z.array(TableInfoSchema), ...capped });
export type TableList = z.infer<typeof TableListSchema>;

export const ColumnInfoSchema = z.object({
  name: z.string(),
  type: z.string(),
  nullable: z.boolean(),
  default: z.string().nullable(),
  comment: z.string().nullable(),
});
export type ColumnInfo = z.infer<typeof ColumnInfoSchema>;

export const ForeignKeySchema = z.object({
  name: z.string(),
  columns: z.array(z.string()),
  refSchema: z.string(),
  refTable: z.string(),
  /** Empty when the engine leaves them implicit (SQLite `REFERENCES parent`: its primary key). */
  refColumns: z.array(z.string()),
});
export type ForeignKey = z.infer<typeof ForeignKeySchema>;

export const IndexInfoSchema = z.object({
  name: z.string(),
  /** Column names in key order; an expression where the engine reports one. */
  columns: z.array(z.string()),
  unique: z.boolean(),
  primary: z.boolean(),
});
export type IndexInfo = z.infer<typeof IndexInfoSchema>;

export const TableDescriptionSchema = z.object({
  schema: z.string(),
  table: z.string(),
  kind: z.string(),
  comment: z.string().nullable(),
  columns: z.array(ColumnInfoSchema),
  primaryKey: z.array(z.string()),
  foreignKeys: z.array(ForeignKeySchema),
  indexes: z.array(IndexInfoSchema),
  ...cut,
});
export type TableDescription = z.infer<typeof TableDescriptionSchema>;

export const RoutineInfoSchema = z.object({
  name: z.string(),
  /** `procedure`, `function`, `aggregate`, `window` ... */
  kind: z.string(),
  /** The argument list as the engine prints it, when it does. */
  arguments: z.string().nullable(),
  returns: z.string().nullable(),
});
export type RoutineInfo = z.infer<typeof RoutineInfoSchema>;

export const RoutineListSchema = z.object({
  schema: z.string(),
  routines: z.array(RoutineInfoSchema),
  ...capped,
  note: z.string().optional(),
});
export type RoutineList = z.infer<typeof RoutineListSchema>;

export const ExplainResultSchema = z.object({
  engine: z.string(),
  /** A compact indented reading of the plan, made per engine. */
  text: z.string(),
  /** The engine's own plan: PostgreSQL and MySQL JSON, SQLite and HANA plan rows. */
  plan: z.unknown(),
  ...cut,
});
export type ExplainResult = z.infer<typeof ExplainResultSchema>;

export const SampleResultSchema = z.object({
  schema: z.string(),
  table: z.string(),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.record(z.string(), z.unknown())),
  rowCount: z.number().int(),
  truncated: z.boolean(),
  ...cut,
});
export type SampleResult = z.infer<typeof SampleResultSchema>;

export const SearchHitSchema = z.object({
  kind: ObjectKindSchema,
  schema: z.string(),
  name: z.string(),
  /** For a column: its table or view. */
  table: z.string().nullable(),
  /** A column's type, a routine's arguments. */
  detail: z.string().nullable(),
});
export type SearchHit = z.infer<typeof SearchHitSchema>;

export const SearchResultSchema = z.object({ hits: z.array(SearchHitSchema), ...capped });
export type SearchResult = z.infer<typeof SearchResultSchema>;
