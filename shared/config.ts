import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { HanactlError } from './errors.js';

/** Settings a person chose, kept in `$HANACTL_HOME/config.json`. */
export const ConfigSchema = z.object({
  /** The person opted into a 0600 key file instead of the OS keychain. */
  keyFile: z.boolean().optional(),
  pool: z
    .object({
      max: z.number().int().min(1).max(1000).optional(),
      min: z.number().int().min(0).max(100).optional(),
      idleTimeoutMillis: z.number().int().min(1000).optional(),
      acquireTimeoutMillis: z.number().int().min(100).optional(),
    })
    .optional(),
  connectTimeoutMs: z.number().int().min(100).max(120_000).optional(),
  /** Audit records older than this many days are pruned (default 30). */
  auditDays: z.number().int().min(1).max(3650).optional(),
  /** MCP over HTTP on this loopback `host:port` (e.g. `127.0.0.1:8765`) at every start; off when absent. */
  http: z.string().min(1).max(300).optional(),
  /** Signed-in callers on MCP over HTTP: JWT access tokens of this issuer for this audience. */
  oauth: z
    .object({
      issuer: z.url({ protocol: /^https?$/ }),
      audience: z.string().min(1).max(500),
      /** After a JWKS fetch, none again for this long (default 30 000): bounds fetches for unknown key ids. */
      jwksCooldownMillis: z.number().int().min(0).max(3_600_000).optional(),
    })
    .optional(),
  /** Limits per signed-in person on MCP over HTTP, so one caller cannot exhaust the broker. */
  perPerson: z
    .object({
      /** MCP sessions one person may hold at once (default 32). */
      maxSessions: z.number().int().min(1).max(10_000).optional(),
      /** Tool calls one person may have running at once, across their sessions (default 8). */
      maxConcurrentCalls: z.number().int().min(1).max(10_000).optional(),
    })
    .optional(),
  /** Limits per MCP session (a relay's, or one over HTTP), so one session cannot hold every pooled connection. */
  perSession: z
    .object({
      /** Database calls one session may have running at once (default half of `pool.max`, at least 1). */
      maxConcurrentCalls: z.number().int().min(1).max(10_000).optional(),
    })
    .optional(),
  /** MCP over HTTP with TLS: PEM files of the certificate (chain) and its key; required beyond loopback. */
  tls: z.object({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
});
export type Config = z.infer<typeof ConfigSchema>;

export function readConfig(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HanactlError('INVALID_REQUEST', `${path} is not valid JSON; fix or remove it.`);
  }
  const result = ConfigSchema.safeParse(parsed);
  if (!result.success)
    throw new HanactlError('INVALID_REQUEST', `${path} has an invalid setting: ${result.error.issues[0]?.path.join('.')}.`);
  return result.data;
}

export function writeConfig(path: string, config: Config): void {
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}
