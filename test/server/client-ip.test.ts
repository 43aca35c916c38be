import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ClientIpResolver } from '../../server/client-ip.js'
import {
  canonicalIp,
  formatIpAddress,
  parseIpAddress,
  parseIpRange,
  rangeContains,
} from '../../server/ip-address.js'

describe('IP addresses', () => {
  it('canonicalises IPv6 as RFC 5952 and IPv4-mapped addresses as IPv4', () => {
    assert.equal(canonicalIp('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1')
    assert.equal(canonicalIp('::ffff:192.0.2.1'), '192.0.2.1')
    assert.equal(canonicalIp('0000:0000:0000:0000:0000:0000:0000:0001'), '::1')
    assert.equal(canonicalIp('2001:DB8:0:0:1:0:0:1'), '2001:db8::1:0:0:1')
    assert.equal(canonicalIp('fe80::1%eth0'), 'fe80::1')
    assert.equal(canonicalIp('192.0.2.7'), '192.0.2.7')
    assert.equal(canonicalIp('not-an-ip'), 'not-an-ip')
  })

  it('refuses malformed addresses', () => {
    for (const text of [
      '1.2.3',
      '1.2.3.256',
      '1..2.3',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      'g::1',
      '::ffff:1.2.3',
      '',
    ]) {
      assert.equal(parseIpAddress(text), undefined, text)
    }
  })

  it('matches CIDR ranges of both versions, mapped IPv4 included', () => {
    const inside = (range: string, ip: string): boolean =>
      rangeContains(parseIpRange(range), parseIpAddress(ip)!)
    assert.equal(inside('10.0.0.0/8', '10.255.1.2'), true)
    assert.equal(inside('10.0.0.0/8', '11.0.0.1'), false)
    assert.equal(inside('10.0.0.0/8', '::ffff:10.1.2.3'), true)
    assert.equal(inside('0.0.0.0/0', '203.0.113.1'), true)
    assert.equal(inside('192.0.2.1', '192.0.2.1'), true)
    assert.equal(inside('192.0.2.1', '192.0.2.2'), false)
    assert.equal(inside('fd00::/8', 'fd12:3456::1'), true)
    assert.equal(inside('fd00::/8', 'fe00::1'), false)
    assert.equal(inside('2001:db8::/33', '2001:db8:7fff::1'), true)
    assert.equal(inside('2001:db8::/33', '2001:db8:8000::1'), false)
    assert.equal(inside('::ffff:10.0.0.0/104', '10.9.9.9'), true)
    assert.equal(inside('10.0.0.0/8', '::1'), false)
  })

  it('refuses malformed ranges with a TypeError', () => {
    for (const text of ['10.0.0.0/33', '10.0.0.0/x', '::/129', 'example.com', '10.0.0.0/']) {
      assert.throws(() => parseIpRange(text), TypeError, text)
    }
  })

  it('formats every parsed address back to a parseable canonical form', () => {
    for (const text of [
      '::',
      '::1',
      '1::',
      '1:0:0:2::3',
      '2001:db8:0:1:1:1:1:1',
      '255.255.255.255',
    ]) {
      const once = formatIpAddress(parseIpAddress(text)!)
      assert.equal(formatIpAddress(parseIpAddress(once)!), once)
    }
  })
})

describe('client IP (D21)', () => {
  it('D21: without trusted proxies the socket peer is the client, whatever X-Forwarded-For says', () => {
    const resolver = new ClientIpResolver()
    assert.equal(resolver.trustsProxies, false)
    assert.equal(resolver.resolve('::ffff:203.0.113.5', '198.51.100.1'), '203.0.113.5')
  })

  it('D21: an untrusted peer is the client even when it sends X-Forwarded-For', () => {
    const resolver = new ClientIpResolver(['10.0.0.0/8'])
    assert.equal(resolver.resolve('203.0.113.5', '198.51.100.1'), '203.0.113.5')
  })

  it('D21: behind trusted proxies the first untrusted hop from the right is the client', () => {
    const resolver = new ClientIpResolver(['10.0.0.0/8', 'fd00::/8'])
    assert.equal(resolver.resolve('10.0.0.1', '203.0.113.9'), '203.0.113.9')
    assert.equal(resolver.resolve('10.0.0.1', '1.1.1.1, 203.0.113.9, 10.0.0.2'), '203.0.113.9')
    assert.equal(resolver.resolve('::ffff:10.0.0.1', '198.51.100.7:4711, fd00::3'), '198.51.100.7')
    assert.equal(resolver.resolve('fd00::1', '[2001:db8::5]:443'), '2001:db8::5')
  })

  it('D21: a spoofed left-most entry never becomes the client', () => {
    const resolver = new ClientIpResolver(['10.0.0.1'])
    const keys = ['6.6.6.6', '7.7.7.7', 'garbage', ''].map((spoof) =>
      resolver.resolve('10.0.0.1', `${spoof}, 203.0.113.9`),
    )
    assert.deepEqual(new Set(keys), new Set(['203.0.113.9']))
  })

  it('D21: when every hop is trusted the left-most is the client; an unreadable hop stops the walk', () => {
    const resolver = new ClientIpResolver(['loopback', 'private'])
    assert.equal(resolver.resolve('127.0.0.1', '192.168.1.4, 10.0.0.2'), '192.168.1.4')
    assert.equal(resolver.resolve('127.0.0.1', 'unknown, 10.0.0.2'), '10.0.0.2')
  })

  it('refuses a trusted-proxy entry that is not an address or range', () => {
    assert.throws(() => new ClientIpResolver(['10.0.0.0/8', 'proxy.internal']), TypeError)
  })
})
