/** SAP HANA Cloud SQL endpoints: `<id>.hana.<region>.hanacloud.ondemand.com` (and older `*.hana.ondemand.com`). */
const HANA_CLOUD_HOST = /\.hana(?:cloud)?\.(?:[a-z0-9-]+\.)*ondemand\.com$/i;
/** HANA Cloud listens on 443, only with TLS. */
const CLOUD_PORT = 443;
/** An on-premise system's SQL port for instance 00. */
const ON_PREMISE_PORT = 30015;

/**
 * The one rule for a target's port and TLS when they are not given, used by `hana://` URLs and
 * project bindings alike: a HANA Cloud host gets 443, anything else 30015; port 443 or a HANA
 * Cloud host means TLS (`encrypt`) unless the target says otherwise.
 */
export function hanaEndpointDefaults(host: string, port: number | undefined): { port: number; encrypt: boolean } {
  const cloud = HANA_CLOUD_HOST.test(host);
  const chosen = port ?? (cloud ? CLOUD_PORT : ON_PREMISE_PORT);
  return { port: chosen, encrypt: cloud || chosen === CLOUD_PORT };
}
