import { z } from 'zod';
import { HanaCliEnvSchema } from './hana-cli-env.js';
import { ConnectionNameSchema, ConnectionRefSchema, EngineSchema } from './schemas.js';

/**
 * The project API's bodies (`/v1/projects/*`, `/v1/trust`). Nothing here ever carries a
 * password: detection answers with names, engines and the reasons behind them.
 */

/** Connections found in a project are named `project:<name>` beside the registry's. */
export const PROJECT_PREFIX = 'project:';

/** True when a connection reference names a project connection. */
export function isProjectRef(name: string): boolean {
  return name.startsWith(PROJECT_PREFIX);
}

/** Which project (and which session's extra sources) a call is resolved against. */
export interface ProjectScope {
  readonly project?: string;
  readonly session?: string;
}

const PathSchema = z.string().min(1, 'path is empty').max(4096);

export const DetectRequestSchema = z.strictObject({
  /** An absolute path inside the project: a hint, never authentication. */
  path: PathSchema,
  /** The calling shim's session: `connFile` and `vcapServices` are kept for its later calls. */
  session: z.string().max(100).optional(),
  /** A connection file named by a person (`hanactl mcp --conn-file`). */
  connFile: z.string().min(1).max(4096).optional(),
  /** The caller's own `VCAP_SERVICES` variable, the last source of the chain. */
  vcapServices: z.string().max(1_000_000).optional(),
  /** The caller's `HANA_CLI_*` target (never its password), the first source of the chain. */
  hanaCli: HanaCliEnvSchema.optional(),
});
export type DetectRequest = z.infer<typeof DetectRequestSchema>;

export const SourceStatusSchema = z.enum(['used', 'skipped', 'absent', 'error']);
export type SourceStatus = z.infer<typeof SourceStatusSchema>;

const NamedEngineSchema = z.object({ name: z.string(), engine: EngineSchema });

/** One step of the chain: what was tried, and why it was used or not. */
export const SourceReportSchema = z.object({
  source: z.string(),
  file: z.string().optional(),
  status: SourceStatusSchema,
  reason: z.string(),
  /** What this source yields (also when an earlier source won): names and engines only. */
  connections: z.array(NamedEngineSchema).optional(),
});
export type SourceReport = z.infer<typeof SourceReportSchema>;

export const ProjectConnectionSummarySchema = z.object({
  name: z.string(),
  engine: EngineSchema,
  source: z.string(),
  primary: z.boolean(),
});

export const DetectResultSchema = z.object({
  path: z.string(),
  root: z.string(),
  /** Root marker files found in the root (package.json, mta.yaml, ...). */
  markers: z.array(z.string()),
  cap: z.object({ isCap: z.boolean(), signals: z.array(z.string()) }),
  connections: z.array(ProjectConnectionSummarySchema),
  /** `project:<name>` of the first match, or null when the project yields none. */
  primary: z.string().nullable(),
  sources: z.array(SourceReportSchema),
});
export type DetectResult = z.infer<typeof DetectResultSchema>;

export const TrustRequestSchema = z.strictObject({ path: PathSchema });
export type TrustRequest = z.infer<typeof TrustRequestSchema>;

export const TrustedFolderSchema = z.object({ path: z.string(), createdAt: z.string() });
export type TrustedFolder = z.infer<typeof TrustedFolderSchema>;

export const TrustListSchema = z.object({ trusted: z.array(TrustedFolderSchema) });
export const TrustChangeSchema = z.object({ path: z.string(), changed: z.boolean() });
export type TrustChange = z.infer<typeof TrustChangeSchema>;

export const ImportRequestSchema = z.strictObject({
  path: PathSchema,
  /** `project:<name>`; the project's first match when left out. */
  connection: ConnectionRefSchema.optional(),
  /** The registry name; `<folder>-<name>` when left out. */
  as: ConnectionNameSchema.optional(),
  connFile: z.string().min(1).max(4096).optional(),
  replace: z.boolean().optional(),
});
export type ImportRequest = z.infer<typeof ImportRequestSchema>;
