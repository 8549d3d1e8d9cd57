import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  resolveWebhookTarget,
  TARGET_NOT_ALLOWED,
  type WebhookAddress,
  WebhookTargetError,
} from '../../src/webhooks/webhook-target.js';

const urlFor = (address: string) =>
  new URL(address.includes(':') ? `https://[${address}]/hook` : `https://${address}/hook`);
const lookupReturning =
  (...answers: WebhookAddress[]) =>
  async (_hostname: string) =>
    answers;

/** The reason `resolveWebhookTarget` gives for refusing the target, or null when it allows it. */
async function refusal(url: URL, options: Parameters<typeof resolveWebhookTarget>[1]): Promise<string | null> {
  try {
    await resolveWebhookTarget(url, options);
    return null;
  } catch (error) {
    if (error instanceof WebhookTargetError) return error.reason;
    throw error;
  }
}

describe('resolveWebhookTarget', () => {
  it.each([
    ['0.0.0.0', 'non-routable'],
    ['0.255.255.255', 'non-routable'],
    ['10.0.0.5', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'non-routable'],
    ['::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    // Attack run of issue 29: IPv6 forms that carry a private IPv4 address.
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
    ['2002:7f00:1::', '6to4 of a loopback'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['::a00:1', 'IPv4-compatible private'],
    ['::808:808', 'IPv4-compatible (deprecated, unassigned)'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated link-local'],
    ['2002:a9fe:a9fe::1', '6to4 of the metadata address'],
    ['2002:a00:1::', '6to4 of a private'],
    ['2002:c0a8:101::', '6to4 of a private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo whose client is a loopback'],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'Teredo whose server is a private'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo whose client is a documentation'],
    // Special-purpose IPv6 ranges.
    ['100::1', 'discard-only'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'segment routing'],
    ['fec0::1', 'site-local'],
    ['1::1', 'unassigned'],
    ['4000::1', 'unassigned'],
    // Special-purpose IPv4 ranges.
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.31.196.1', 'AS112'],
    ['192.52.193.1', 'AMT'],
  ])('refuses %s (%s), as a literal and as a DNS answer', async (address) => {
    expect(await refusal(urlFor(address), { allowPrivateTargets: false })).toBe(TARGET_NOT_ALLOWED);
    const lookup = lookupReturning({ address, family: address.includes(':') ? 6 : 4 });
    expect(await refusal(new URL('https://hooks.example.test/'), { allowPrivateTargets: false, lookup })).toBe(
      TARGET_NOT_ALLOWED,
    );
  });

  it.each([
    ['93.184.216.34', 4],
    ['8.8.8.8', 4],
    ['1.1.1.1', 4],
    ['9.255.255.255', 4],
    ['11.0.0.1', 4],
    ['100.63.255.255', 4],
    ['100.128.0.1', 4],
    ['172.15.255.255', 4],
    ['172.32.0.1', 4],
    ['192.0.1.1', 4],
    ['198.17.255.255', 4],
    ['198.20.0.1', 4],
    ['223.255.255.255', 4],
    ['2606:4700::1111', 6],
    ['2001:4860:4860::8888', 6],
    ['::ffff:8.8.8.8', 6],
    ['64:ff9b::808:808', 6],
    ['2002:808:808::1', 6],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 6],
    ['2a00:1450:4001:81c::200e', 6],
  ] as const)('allows the public address %s', async (address, family) => {
    const target = await resolveWebhookTarget(urlFor(address), { allowPrivateTargets: false });
    expect(target.family).toBe(family);
    expect(target.address).toBe(urlFor(address).hostname.replace(/^\[|\]$/g, ''));
  });

  it('uses an IP literal as it is, without asking DNS', async () => {
    const lookup = async (): Promise<WebhookAddress[]> => {
      throw new Error('DNS asked');
    };
    await expect(
      resolveWebhookTarget(new URL('http://8.8.8.8:8080/x'), { allowPrivateTargets: false, lookup }),
    ).resolves.toEqual({
      address: '8.8.8.8',
      family: 4,
    });
    // The URL parser reads 0x7f.1 as 127.0.0.1.
    expect(await refusal(new URL('http://0x7f.1/'), { allowPrivateTargets: false, lookup })).toBe(TARGET_NOT_ALLOWED);
  });

  it('returns the first answer of a host name whose answers are all public', async () => {
    const lookup = lookupReturning({ address: '2606:4700::1111', family: 6 }, { address: '93.184.216.34', family: 4 });
    await expect(
      resolveWebhookTarget(new URL('https://hooks.example.test/'), { allowPrivateTargets: false, lookup }),
    ).resolves.toEqual({ address: '2606:4700::1111', family: 6 });
  });

  it('refuses a host name when any of its answers is private', async () => {
    const lookup = lookupReturning({ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 });
    expect(await refusal(new URL('https://hooks.example.test/'), { allowPrivateTargets: false, lookup })).toBe(
      TARGET_NOT_ALLOWED,
    );
  });

  it('refuses a link-local answer that carries a zone', async () => {
    const lookup = lookupReturning({ address: 'fe80::1%eth0', family: 6 });
    expect(await refusal(new URL('https://hooks.example.test/'), { allowPrivateTargets: false, lookup })).toBe(
      TARGET_NOT_ALLOWED,
    );
  });

  it('allows private answers when the operator allows private targets', async () => {
    const lookup = lookupReturning({ address: '10.0.0.5', family: 4 }, { address: '93.184.216.34', family: 4 });
    const options = { allowPrivateTargets: true, lookup };
    await expect(resolveWebhookTarget(new URL('https://hooks.example.test/'), options)).resolves.toEqual({
      address: '10.0.0.5',
      family: 4,
    });
    await expect(resolveWebhookTarget(urlFor('::1'), options)).resolves.toEqual({ address: '::1', family: 6 });
  });

  it('refuses a host name that does not resolve', async () => {
    const failing = async (): Promise<WebhookAddress[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.test'), { code: 'ENOTFOUND' });
    };
    const url = new URL('https://hooks.example.test/');
    expect(await refusal(url, { allowPrivateTargets: true, lookup: failing })).toBe('does not resolve (ENOTFOUND)');
    expect(await refusal(url, { allowPrivateTargets: true, lookup: lookupReturning() })).toBe('does not resolve');
  });

  it('refuses an answer that is not an IP address', async () => {
    const lookup = lookupReturning({ address: 'localhost', family: 4 });
    expect(await refusal(new URL('https://hooks.example.test/'), { allowPrivateTargets: true, lookup })).toBe(
      TARGET_NOT_ALLOWED,
    );
  });

  it('looks host names up in DNS by default', async () => {
    expect(await refusal(new URL('http://localhost:8080/'), { allowPrivateTargets: false })).toBe(TARGET_NOT_ALLOWED);
  });
});

describe('checkWebhookUrl', () => {
  it('returns the parsed URL of an http or https URL', () => {
    expect(checkWebhookUrl('https://hooks.example.test/baud?x=1').href).toBe('https://hooks.example.test/baud?x=1');
    expect(checkWebhookUrl('http://[2606:4700::1111]:8080/').hostname).toBe('[2606:4700::1111]');
    expect(checkWebhookUrl(`https://h.example/${'a'.repeat(2048 - 'https://h.example/'.length)}`).href).toHaveLength(
      2048,
    );
  });

  it.each([
    ['an ftp URL', 'ftp://files.example.test/in', 'https or http only'],
    ['a javascript URL', 'javascript:alert(1)', 'https or http only'],
    ['a file URL', 'file:///etc/passwd', 'https or http only'],
    ['a user name and password', 'https://user:secret@hooks.example.test/', 'has a user name or password'],
    ['a user name alone', 'https://user@hooks.example.test/', 'has a user name or password'],
    ['a relative URL', '/hooks/baud', 'not an absolute URL'],
    ['a bare host name', 'hooks.example.test', 'not an absolute URL'],
    ['an empty string', '', 'not an absolute URL'],
    [
      '2049 characters',
      `https://h.example/${'a'.repeat(2049 - 'https://h.example/'.length)}`,
      'longer than 2048 characters',
    ],
  ])('refuses %s', (_case, url, reason) => {
    let thrown: unknown;
    try {
      checkWebhookUrl(url);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WebhookTargetError);
    expect((thrown as WebhookTargetError).reason).toBe(reason);
    expect((thrown as WebhookTargetError).message).toBe(`Webhook URL refused: ${reason}.`);
  });
});
