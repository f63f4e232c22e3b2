import type { Target } from '../../shared/connection-url.js';
import { isHanactlError } from '../../shared/errors.js';
import { hanaEndpointDefaults } from '../../shared/hana-endpoint.js';
import { buildHanaConnectOptions } from '../engines/hana/connect-options.js';
import { asFlag, asText, SourceError } from './source-error.js';

/** A target and its secret, as a binding's credentials give them. */
export interface BoundTarget {
  readonly target: Target;
  readonly password?: string;
}

/** host and port from a JDBC URL (`jdbc:sap://host:port/?...`), which HDI bindings carry. */
function fromJdbc(url: string | undefined): { host?: string; port?: string } {
  const match = url ? /^jdbc:sap:\/\/\[?([^\]/:?]+)\]?(?::(\d+))?/i.exec(url) : null;
  return match ? { ...(match[1] ? { host: match[1] } : {}), ...(match[2] ? { port: match[2] } : {}) } : {};
}

function flag(options: Record<string, string>, name: string, value: unknown): void {
  const parsed = asFlag(value);
  if (parsed !== undefined) options[name] = String(parsed);
}

/**
 * Maps SAP HANA credentials (a VCAP `hana`/`hanatrial` binding, CAP's `credentials`) to a
 * `hana://` target: host, port, user, tenant (`databaseName`), `encrypt`,
 * `sslValidateCertificate`, `currentSchema` from `schema`, the certificate as trust store.
 * The options are checked offline with the driver's own `buildHanaConnectOptions`. `where`
 * names the binding in messages; no value is ever echoed.
 */
export function hanaTarget(credentials: Record<string, unknown>, where: string): BoundTarget {
  const jdbc = fromJdbc(asText(credentials.url));
  const host = asText(credentials.host) ?? asText(credentials.hostname) ?? jdbc.host;
  if (!host) throw new SourceError(`${where} has no credentials.host.`);
  const portText = asText(credentials.port) ?? jdbc.port;
  const given = portText === undefined ? undefined : Number(portText);
  if (given !== undefined && (!Number.isInteger(given) || given < 1 || given > 65535))
    throw new SourceError(`${where} has a credentials.port that is not a number from 1 to 65535.`);
  const endpoint = hanaEndpointDefaults(host, given);
  const port = endpoint.port;
  const user = asText(credentials.user) ?? asText(credentials.username) ?? asText(credentials.uid);
  if (!user) throw new SourceError(`${where} has no credentials.user.`);
  const password =
    typeof credentials.password === 'string' ? credentials.password : typeof credentials.pwd === 'string' ? credentials.pwd : undefined;

  const options: Record<string, string> = {};
  const certificate = asText(credentials.certificate);
  flag(options, 'encrypt', credentials.encrypt);
  if (options.encrypt === undefined && (certificate || endpoint.encrypt)) options.encrypt = 'true';
  flag(options, 'sslValidateCertificate', credentials.sslValidateCertificate ?? credentials.validate_certificate);
  const hostInCertificate = asText(credentials.sslHostNameInCertificate) ?? asText(credentials.hostname_in_certificate);
  if (hostInCertificate) options.sslHostNameInCertificate = hostInCertificate;
  if (certificate) options.sslTrustStore = certificate;
  const schema = asText(credentials.schema) ?? asText(credentials.currentSchema);
  if (schema) options.currentSchema = schema;
  const tenant = asText(credentials.databaseName) ?? asText(credentials.tenant);

  const target: Target = { engine: 'hana', scheme: 'hana', host, port, user, ...(tenant ? { database: tenant } : {}), options };
  try {
    buildHanaConnectOptions(target, { connectTimeoutMs: 10_000 });
  } catch (err) {
    throw new SourceError(`${where}: ${isHanactlError(err) ? err.message : 'its connect options are not valid.'}`);
  }
  return password !== undefined ? { target, password } : { target };
}
