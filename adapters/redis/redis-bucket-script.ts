import { createHash } from 'node:crypto'

/**
 * One take (D20) as a Lua script, so that Redis runs the read, the refill and the write as one
 * command: atomic, one round trip. The level is kept in the core's fixed-point units (one token
 * is `windowMs` units, each millisecond adds `capacity`), so every refill is an exact integer,
 * as in `takeToken`; the core turns the units left into the answer (`takeResult`).
 *
 * KEYS[1] the bucket, a hash of `units` and `clock` (the latest time it has seen).
 * ARGV[1] capacity, ARGV[2] windowMs, ARGV[3] the caller's time in whole epoch milliseconds,
 * or empty to count on Redis's own clock (`TIME`).
 *
 * Replies `{allowed, units}`: 1 or 0, and the units left as a decimal string (a Lua number
 * would reach the client truncated to an integer, and big ones in exponent form).
 *
 * The clock never moves back: a time earlier than the bucket's refills nothing and leaves the
 * clock where it was. The key expires `windowMs` after the last take, when its bucket is full
 * again at the latest (a full bucket and an absent one are the same).
 */
export const BUCKET_SCRIPT = `
local capacity = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local full = capacity * window
local units = full
local clock = now
local state = redis.call('HMGET', KEYS[1], 'units', 'clock')
if state[1] and state[2] then
  units = math.min(full, tonumber(state[1]))
  clock = tonumber(state[2])
  if now > clock then
    units = math.min(full, units + (now - clock) * capacity)
    clock = now
  end
end
local allowed = 0
if units >= window then
  units = units - window
  allowed = 1
end
local left = string.format('%.0f', units)
redis.call('HSET', KEYS[1], 'units', left, 'clock', string.format('%.0f', clock))
redis.call('PEXPIRE', KEYS[1], window)
return {allowed, left}
`

/** The script's SHA-1, for `EVALSHA`. */
export const BUCKET_SCRIPT_SHA = createHash('sha1').update(BUCKET_SCRIPT).digest('hex')
