import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * hana-cli's `HANA_CLI_*` variables, as an editor's environment gives them to the shim. hana-cli
 * lets `HANA_CLI_HOST` beat every connection file; hanactl honours the target the same way, but
 * never the password: `HANA_CLI_PASSWORD` is not sent to the daemon, only the fact that it was set.
 * `HANA_CLI_CONN_FILE` names a connection file hana-cli reads right after `.cdsrc-private.json`.
 */
export const HanaCliEnvSchema = z.strictObject({
  host: z.string().min(1).max(255).optional(),
  port: z.string().max(10).optional(),
  user: z.string().max(256).optional(),
  database: z.string().max(256).optional(),
  schema: z.string().max(256).optional(),
  /** `HANA_CLI_CONN_FILE`: a default-env.json style file, looked for in the project and its parents. */
  connFile: z.string().min(1).max(4096).optional(),
  /** `HANA_CLI_PASSWORD` was set in the environment (its value is never read). */
  passwordSet: z.boolean().optional(),
});
export type HanaCliEnv = z.infer<typeof HanaCliEnvSchema>;

/** The `HANA_CLI_*` target and connection file from `env`, when either is set; never the password. */
export function hanaCliFromEnv(env: NodeJS.ProcessEnv): HanaCliEnv | undefined {
  const pick = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const host = pick('HANA_CLI_HOST');
  const connFile = pick('HANA_CLI_CONN_FILE');
  if (!host && !connFile) return undefined;
  if (!host) return { connFile: connFile as string };
  const port = pick('HANA_CLI_PORT');
  const user = pick('HANA_CLI_USER');
  const database = pick('HANA_CLI_DATABASE');
  const schema = pick('HANA_CLI_SCHEMA');
  return {
    host,
    ...(port ? { port } : {}),
    ...(user ? { user } : {}),
    ...(database ? { database } : {}),
    ...(schema ? { schema } : {}),
    ...(connFile ? { connFile } : {}),
    ...(env.HANA_CLI_PASSWORD ? { passwordSet: true } : {}),
  };
}

/**
 * hana-cli's `HANA_CLI_PROJECT_PATH`: when it names an existing folder, hana-cli changes into it
 * before it looks for any connection file, so it stands in for the working folder. Relative to
 * `cwd`; undefined when unset or not a folder (hana-cli then keeps its working folder too).
 */
export function hanaCliProjectPath(env: Readonly<Record<string, string | undefined>>, cwd: string): string | undefined {
  const value = env.HANA_CLI_PROJECT_PATH?.trim();
  if (!value) return undefined;
  const path = resolve(cwd, value);
  try {
    return statSync(path).isDirectory() ? path : undefined;
  } catch {
    return undefined;
  }
}
