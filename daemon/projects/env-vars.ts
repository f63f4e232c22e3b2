import { type Candidate, makeCandidate } from './candidate.js';
import { hanaTarget } from './hana-binding.js';
import { targetFromUrl } from './postgres-binding.js';
import { SourceError } from './source-error.js';
import { connectionsFromVcap, type SourceYield } from './vcap.js';

/** `HANA_*` variable names and the credential each one fills. */
const HANA_VARS: Readonly<Record<string, string>> = {
  HANA_HOST: 'host',
  HANA_HOSTNAME: 'host',
  HANA_PORT: 'port',
  HANA_USER: 'user',
  HANA_UID: 'user',
  HANA_PASSWORD: 'password',
  HANA_PWD: 'password',
  HANA_SCHEMA: 'schema',
  HANA_DATABASE: 'databaseName',
  HANA_DATABASE_NAME: 'databaseName',
  HANA_TENANT: 'databaseName',
  HANA_ENCRYPT: 'encrypt',
  HANA_SSL_VALIDATE_CERTIFICATE: 'sslValidateCertificate',
  HANA_SSLVALIDATECERTIFICATE: 'sslValidateCertificate',
  HANA_CERTIFICATE: 'certificate',
};

/**
 * Connections from a `.env` file's variables, in dotenv's spirit: `VCAP_SERVICES` inside it
 * wins (as hana-cli loads it), else `HANA_HOST`/`HANA_USER`/`HANA_PASSWORD`... style
 * variables, else `DATABASE_URL`. Both of the last two may be present: both are offered.
 */
export function connectionsFromEnvVars(vars: ReadonlyMap<string, string>, where: string, root: string): SourceYield {
  const vcap = vars.get('VCAP_SERVICES');
  if (vcap !== undefined) return connectionsFromVcap(vcap, where, root, vars.get('TARGET_CONTAINER'));
  const candidates: Candidate[] = [];
  const notes: string[] = [];
  const hana: Record<string, string> = {};
  for (const [name, field] of Object.entries(HANA_VARS)) {
    const value = vars.get(name);
    if (value !== undefined && value !== '' && hana[field] === undefined) hana[field] = value;
  }
  if (Object.keys(hana).length > 0) {
    try {
      const bound = hanaTarget(hana, `${where} (HANA_* variables)`);
      candidates.push(makeCandidate({ name: 'hana', target: bound.target, detail: 'HANA_* variables' }, bound.password));
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      // Name the variable, not the credential field it fills.
      notes.push(err.message.replace(/credentials\.(\w+)/, (_m, f: string) => Object.keys(HANA_VARS).find((k) => HANA_VARS[k] === f) ?? f));
    }
  }
  const url = vars.get('DATABASE_URL');
  if (url !== undefined && url !== '') {
    try {
      const bound = targetFromUrl(url, `DATABASE_URL in ${where}`, root);
      candidates.push(makeCandidate({ name: 'database', target: bound.target, detail: 'DATABASE_URL' }, bound.password));
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      notes.push(err.message);
    }
  }
  return { candidates, ...(candidates[0] ? { preferred: candidates[0].name } : {}), notes };
}
