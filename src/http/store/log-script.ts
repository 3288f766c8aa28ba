/**
 * The one Lua script every request of a store-backed simulator runs (docs/simulator.md#replicas-on-redis):
 * it stamps the request with Redis's own clock and appends it to the log, atomically. The stamp is
 * the real time the simulated clock runs on; it never goes back, even if Redis's clock does, so
 * every replica applying the log sees time move forward in log order.
 *
 * KEYS[1] the log (a stream), KEYS[2] the last stamp, KEYS[3] the start state (genesis.ts); all
 * share the store's hash tag, so the script runs on a Redis Cluster. ARGV: the replica that sent
 * it, its number there, the request. Without the start state (Redis restarted without its data, or
 * flushed) nothing is appended: the replicas' state is no longer the store's, and the error says so.
 */
export const NO_GENESIS = 'KEYSIM_NO_GENESIS';

export const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('${NO_GENESIS} the store no longer holds this simulator')
end
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if ms < last then ms = last end
local stamp = string.format('%.0f', ms)
redis.call('SET', KEYS[2], stamp)
return redis.call('XADD', KEYS[1], '*', 's', stamp, 'o', ARGV[1], 'n', ARGV[2], 'p', ARGV[3])
`;
