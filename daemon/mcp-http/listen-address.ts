import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { HanactlError } from '../../shared/errors.js';

/** Where MCP over HTTP listens, and what a request's Host and Origin may name. */
export interface HttpListenAddress {
  /** The loopback address bound (an IP). */
  readonly host: string;
  readonly port: number;
  /** `http://127.0.0.1:PORT`: the endpoints are `${url}/mcp/<connection>`. */
  readonly url: string;
  /** Host header values accepted (lower case): the bound address and `localhost`, each with the port. */
  readonly hosts: readonly string[];
  /** Origin header values accepted, when a request carries one. */
  readonly origins: readonly string[];
  /**
   * Listening beyond loopback (with TLS): a team's broker is reached by names a reverse proxy
   * or DNS gives it, so any Host is accepted; callers prove who they are with their tokens.
   */
  readonly remote?: boolean;
}

/** Resolves a host name to its addresses (node:dns by default; tests inject one). */
export type HostLookup = (host: string) => Promise<readonly string[]>;

const systemLookup: HostLookup = async (host) => (await dnsLookup(host, { all: true })).map((a) => a.address);

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8 and ::1, in any spelling (an IPv4-mapped IPv6 address too). */
export function isLoopback(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  const v4 = mapped ?? ip;
  if (isIP(v4) === 4) return LOOPBACK.check(v4, 'ipv4');
  return isIP(ip) === 6 && LOOPBACK.check(ip, 'ipv6');
}

/** Said with every refusal of a non-loopback address: what makes one acceptable. */
export const BEYOND_LOOPBACK = 'To listen beyond loopback, serve TLS: add --tls-cert <file> --tls-key <file>';

function refuse(message: string): HanactlError {
  return new HanactlError('INVALID_REQUEST', message);
}

/** `host:port`, `[v6]:port`: the parts, or a sentence. */
function split(text: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  const plain = /^([^:[\]]+):(\d+)$/.exec(text);
  const match = bracketed ?? plain;
  if (!match) {
    const hint = isIP(text) === 6 || text.split(':').length > 2 ? ' (write an IPv6 address in brackets, e.g. [::1]:8765)' : '';
    throw refuse(`The MCP over HTTP address "${text}" is not host:port${hint}; use e.g. 127.0.0.1:8765.`);
  }
  const port = Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw refuse(`The MCP over HTTP port in "${text}" must be a number from 1 to 65535.`);
  }
  return { host: match[1] as string, port };
}

/**
 * Checks and resolves `--http host:port` (or the config's `http`). Without TLS, MCP over HTTP
 * is served on loopback only: an address for every interface (0.0.0.0, ::), a LAN address, or
 * a host name that resolves to anything but loopback is refused with a sentence, before
 * anything listens. With TLS (`--tls-cert`, `--tls-key`) any address may be used.
 */
export async function resolveListenAddress(
  text: string,
  lookup: HostLookup = systemLookup,
  options: { readonly tls?: boolean } = {},
): Promise<HttpListenAddress> {
  const { host: given, port } = split(text.trim());
  if (options.tls) return remoteAddress(given, port, lookup);
  const useInstead = `hanactl serves MCP over HTTP on loopback only; use 127.0.0.1:${port}. ${BEYOND_LOOPBACK}`;
  let ip: string;
  if (isIP(given)) {
    if (/^0+(\.0+){3}$/.test(given) || /^[0:]+$/.test(given)) {
      throw refuse(`The MCP over HTTP address ${given} would listen on every network interface; ${useInstead}.`);
    }
    if (!isLoopback(given)) throw refuse(`The MCP over HTTP address ${given} is not a loopback address; ${useInstead}.`);
    ip = given;
  } else {
    let addresses: readonly string[];
    try {
      addresses = await lookup(given);
    } catch {
      throw refuse(`The MCP over HTTP host "${given}" does not resolve; ${useInstead}.`);
    }
    const outside = addresses.filter((a) => !isLoopback(a));
    if (addresses.length === 0 || outside.length > 0) {
      throw refuse(
        `The MCP over HTTP host "${given}" resolves to ${outside.join(', ') || 'nothing'}, which is not loopback; ${useInstead}.`,
      );
    }
    ip = addresses.find((a) => isIP(a) === 4) ?? (addresses[0] as string);
  }
  const urlHost = isIP(ip) === 6 ? `[${ip}]` : ip;
  const hosts = [
    ...new Set([`${urlHost}:${port}`, `localhost:${port}`, ...(isIP(given) ? [] : [`${given}:${port}`])].map((h) => h.toLowerCase())),
  ];
  return { host: ip, port, url: `http://${urlHost}:${port}`, hosts, origins: hosts.map((h) => `http://${h}`) };
}

/** Any address, served with TLS. */
async function remoteAddress(given: string, port: number, lookup: HostLookup): Promise<HttpListenAddress> {
  let ip = given;
  if (!isIP(given)) {
    try {
      const addresses = await lookup(given);
      ip = addresses.find((a) => isIP(a) === 4) ?? (addresses[0] as string);
    } catch {
      throw refuse(`The MCP over HTTP host "${given}" does not resolve.`);
    }
    if (!ip) throw refuse(`The MCP over HTTP host "${given}" does not resolve.`);
  }
  const urlHost = isIP(given) === 6 ? `[${given}]` : given;
  const url = `https://${urlHost}:${port}`;
  if (!isLoopback(ip)) return { host: ip, port, url, hosts: [], origins: [], remote: true };
  const hosts = [...new Set([`${urlHost}:${port}`, `localhost:${port}`].map((h) => h.toLowerCase()))];
  return { host: ip, port, url, hosts, origins: hosts.map((h) => `https://${h}`) };
}
