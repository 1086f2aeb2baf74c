import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AllowedHostError, LOOPBACK_HOST_NAMES, allowedHostNames, canonicalHostName, hostHeaderName, isWildcardAddress, originHostName } from './http-hosts.js';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const dnsName = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));
const port = fc.integer({ min: 1, max: 65_535 });

/** Whether a URL parser takes `name` as a host (`a.0` is not one: a last label of digits makes it an IPv4 address). */
function isHost(name: string): boolean {
  try {
    canonicalHostName(name);
    return true;
  } catch {
    return false;
  }
}

describe('Host and Origin names', () => {
  it('a listed name matches its Host header with any port or none, in any case', () => {
    fc.assert(
      fc.property(fc.oneof(dnsName, ipv4), port, fc.boolean(), (name, somePort, upper) => {
        fc.pre(isHost(name));
        const allowed = allowedHostNames('0.0.0.0', [name]);
        const shown = upper ? name.toUpperCase() : name;
        expect(allowed.has(hostHeaderName(shown) as string)).toBe(true);
        expect(allowed.has(hostHeaderName(`${shown}:${somePort}`) as string)).toBe(true);
        expect(allowed.has(originHostName(`https://${shown}:${somePort}`) as string)).toBe(true);
      }),
    );
  });

  it('a name that is not listed never matches, whatever its port', () => {
    fc.assert(
      fc.property(dnsName, dnsName, port, (listed, other, somePort) => {
        fc.pre(isHost(listed) && isHost(other) && canonicalHostName(listed) !== canonicalHostName(other) && !LOOPBACK_HOST_NAMES.includes(canonicalHostName(other)));
        const allowed = allowedHostNames('0.0.0.0', [listed]);
        expect(allowed.has(hostHeaderName(`${other}:${somePort}`) ?? '')).toBe(false);
        expect(allowed.has(originHostName(`http://${other}`) ?? '')).toBe(false);
      }),
    );
  });

  it('the loopback names are always allowed, with or without a port; IPv6 in brackets', () => {
    const allowed = allowedHostNames('127.0.0.1', []);
    for (const host of ['localhost', 'localhost:8765', '127.0.0.1', '127.0.0.1:1', '[::1]', '[::1]:8765', 'LocalHost.']) {
      expect(allowed.has(hostHeaderName(host) as string), host).toBe(true);
    }
    expect(allowedHostNames('::1', []).has('[::1]')).toBe(true);
    expect(allowedHostNames('192.168.1.5', []).has('192.168.1.5')).toBe(true);
    expect(allowedHostNames('fe80::1', []).has('[fe80::1]')).toBe(true);
  });

  it('a Host header that names nothing valid matches nothing and never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (junk) => {
        const name = hostHeaderName(junk);
        if (name !== undefined) expect(() => canonicalHostName(name)).not.toThrow();
      }),
    );
    for (const junk of ['', ':80', 'a:b', 'evil.example:http', '[::1', '[::1]x', 'a b', 'user@host', 'host/path']) {
      expect(hostHeaderName(junk), junk).toBeUndefined();
    }
    for (const origin of ['null', 'file:///etc', 'ftp://localhost', 'not a url']) expect(originHostName(origin), origin).toBeUndefined();
  });

  it('listing refuses what is not a bare name or address, with a clear error', () => {
    for (const bad of ['', 'http://gpu-box', 'gpu-box:8765', 'gpu-box/mcp', '*.example.com', '300.1.1.1', 'a b', '-leading.example']) {
      expect(() => canonicalHostName(bad), bad).toThrow(AllowedHostError);
      expect(() => allowedHostNames('0.0.0.0', [bad]), bad).toThrow(AllowedHostError);
    }
    expect(canonicalHostName('GPU-Box.Example.')).toBe('gpu-box.example');
    expect(canonicalHostName('::1')).toBe('[::1]');
    expect(canonicalHostName('0')).toBe('0.0.0.0');
    expect(canonicalHostName('0:0::1')).toBe('[::1]');
  });

  it('knows the wildcard addresses', () => {
    for (const wildcard of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0']) expect(isWildcardAddress(wildcard), wildcard).toBe(true);
    for (const specific of ['127.0.0.1', '::1', '10.0.0.1', 'localhost']) expect(isWildcardAddress(specific), specific).toBe(false);
  });
});
