import { describe, expect, it } from 'vitest';
import { isLoopback, resolveListenAddress } from '../../../../daemon/mcp-http/listen-address.js';

const lookup = (table: Record<string, string[]>) => async (host: string) => {
  const found = table[host];
  if (!found) throw new Error('ENOTFOUND');
  return found;
};
const ONLY_LOOPBACK =
  'hanactl serves MCP over HTTP on loopback only; use 127.0.0.1:8765. To listen beyond loopback, serve TLS: add --tls-cert <file> --tls-key <file>.';

describe('resolveListenAddress', () => {
  it('accepts an IPv4 loopback address; Host and Origin may name it or localhost', async () => {
    expect(await resolveListenAddress('127.0.0.1:8765')).toEqual({
      host: '127.0.0.1',
      port: 8765,
      url: 'http://127.0.0.1:8765',
      hosts: ['127.0.0.1:8765', 'localhost:8765'],
      origins: ['http://127.0.0.1:8765', 'http://localhost:8765'],
    });
  });

  it('accepts [::1] and a name that resolves to loopback only (preferring IPv4)', async () => {
    expect(await resolveListenAddress('[::1]:8765')).toMatchObject({
      host: '::1',
      url: 'http://[::1]:8765',
      hosts: ['[::1]:8765', 'localhost:8765'],
    });
    const local = await resolveListenAddress('localhost:8765', lookup({ localhost: ['::1', '127.0.0.1'] }));
    expect(local).toMatchObject({ host: '127.0.0.1', url: 'http://127.0.0.1:8765', hosts: ['127.0.0.1:8765', 'localhost:8765'] });
    const named = await resolveListenAddress('Dev.Local:8765', lookup({ 'Dev.Local': ['127.0.0.2'] }));
    expect(named.hosts).toEqual(['127.0.0.2:8765', 'localhost:8765', 'dev.local:8765']);
  });

  it.each([
    ['0.0.0.0:8765', `The MCP over HTTP address 0.0.0.0 would listen on every network interface; ${ONLY_LOOPBACK}`],
    ['[::]:8765', `The MCP over HTTP address :: would listen on every network interface; ${ONLY_LOOPBACK}`],
    ['192.168.1.20:8765', `The MCP over HTTP address 192.168.1.20 is not a loopback address; ${ONLY_LOOPBACK}`],
    ['[fe80::1]:8765', `The MCP over HTTP address fe80::1 is not a loopback address; ${ONLY_LOOPBACK}`],
    ['lan-box:8765', `The MCP over HTTP host "lan-box" resolves to 10.0.0.5, which is not loopback; ${ONLY_LOOPBACK}`],
    ['split:8765', `The MCP over HTTP host "split" resolves to 10.0.0.6, which is not loopback; ${ONLY_LOOPBACK}`],
    ['nowhere:8765', `The MCP over HTTP host "nowhere" does not resolve; ${ONLY_LOOPBACK}`],
  ])('refuses %s', async (text, sentence) => {
    const dns = lookup({ 'lan-box': ['10.0.0.5'], split: ['127.0.0.1', '10.0.0.6'] });
    await expect(resolveListenAddress(text, dns)).rejects.toThrow(sentence);
  });

  it('with TLS, accepts any address: https, any Host beyond loopback, the loopback names on loopback', async () => {
    expect(await resolveListenAddress('0.0.0.0:8443', undefined, { tls: true })).toEqual({
      host: '0.0.0.0',
      port: 8443,
      url: 'https://0.0.0.0:8443',
      hosts: [],
      origins: [],
      remote: true,
    });
    expect(await resolveListenAddress('lan-box:8443', lookup({ 'lan-box': ['10.0.0.5'] }), { tls: true })).toMatchObject({
      host: '10.0.0.5',
      url: 'https://lan-box:8443',
      remote: true,
    });
    expect(await resolveListenAddress('127.0.0.1:8443', undefined, { tls: true })).toEqual({
      host: '127.0.0.1',
      port: 8443,
      url: 'https://127.0.0.1:8443',
      hosts: ['127.0.0.1:8443', 'localhost:8443'],
      origins: ['https://127.0.0.1:8443', 'https://localhost:8443'],
    });
    await expect(resolveListenAddress('nowhere:8443', lookup({}), { tls: true })).rejects.toThrow(
      'The MCP over HTTP host "nowhere" does not resolve.',
    );
  });

  it.each([
    ['127.0.0.1', /is not host:port; use e.g. 127.0.0.1:8765/],
    ['::1:8765', /write an IPv6 address in brackets, e.g. \[::1\]:8765/],
    ['127.0.0.1:0', /port in "127.0.0.1:0" must be a number from 1 to 65535/],
    ['127.0.0.1:70000', /must be a number from 1 to 65535/],
  ])('refuses the malformed %s', async (text, message) => {
    await expect(resolveListenAddress(text)).rejects.toThrow(message);
  });
});

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', false],
    ['10.0.0.1', false],
    ['::', false],
    ['localhost', false],
  ])('%s is %s', (ip, expected) => {
    expect(isLoopback(ip)).toBe(expected);
  });
});
