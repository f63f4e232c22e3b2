/**
 * SAP HANA Cloud SQL endpoints: `<id>.hana.<region>.hanacloud.ondemand.com` (and older
 * `*.hana.ondemand.com`): a `hana` or `hanacloud` label after the first, then only labels of
 * letters, digits and `-` up to `ondemand.com`. A scan over the labels from the end, linear in the
 * host (a host can come from a project file; the equivalent regex retries from every `.hana.`).
 */
function isHanaCloudHost(host: string): boolean {
  const labels = host.toLowerCase().split('.');
  if (labels.length < 4 || labels.at(-1) !== 'com' || labels.at(-2) !== 'ondemand') return false;
  for (let i = labels.length - 3; i >= 1; i--) {
    const label = labels[i] as string;
    if (label === 'hana' || label === 'hanacloud') return true;
    if (!/^[a-z0-9-]+$/.test(label)) return false;
  }
  return false;
}
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
  const cloud = isHanaCloudHost(host);
  const chosen = port ?? (cloud ? CLOUD_PORT : ON_PREMISE_PORT);
  return { port: chosen, encrypt: cloud || chosen === CLOUD_PORT };
}
