import { z } from 'zod';

/**
 * hana-cli's `HANA_CLI_*` variables, as an editor's environment gives them to the shim. hana-cli
 * lets `HANA_CLI_HOST` beat every connection file; hanactl honours the target the same way, but
 * never the password: `HANA_CLI_PASSWORD` is not sent to the daemon, only the fact that it was set.
 */
export const HanaCliEnvSchema = z.strictObject({
  host: z.string().min(1).max(255),
  port: z.string().max(10).optional(),
  user: z.string().max(256).optional(),
  database: z.string().max(256).optional(),
  schema: z.string().max(256).optional(),
  /** `HANA_CLI_PASSWORD` was set in the environment (its value is never read). */
  passwordSet: z.boolean().optional(),
});
export type HanaCliEnv = z.infer<typeof HanaCliEnvSchema>;

/** The `HANA_CLI_*` target from `env`, when `HANA_CLI_HOST` is set; never the password. */
export function hanaCliFromEnv(env: NodeJS.ProcessEnv): HanaCliEnv | undefined {
  const host = env.HANA_CLI_HOST?.trim();
  if (!host) return undefined;
  const pick = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
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
    ...(env.HANA_CLI_PASSWORD ? { passwordSet: true } : {}),
  };
}
