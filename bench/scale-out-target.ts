// What the Redis targets of the benchmark add to the service's start: limits on Redis and, for
// two instances, HAProxy in front of them (as examples/scale-out runs them).

/** `serve` arguments for limits on Redis: a key prefix of this run's own, so no bucket is left over. */
export function sharedLimits(): string[] {
  const redis = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'
  return [
    '--redis-url',
    redis,
    '--redis-key-prefix',
    `bench:${process.pid}:${Date.now()}:`,
    '--trust-proxy',
    '127.0.0.1',
  ]
}

/** HAProxy in front of `ports`, round robin, keep-alive on both sides. */
export function haproxyConfig(port: number, ports: readonly number[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  option http-keep-alive',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  http-request set-header X-Forwarded-For %[src]',
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    ...ports.map((p, i) => `  server i${i} 127.0.0.1:${p}`),
    '',
  ].join('\n')
}
