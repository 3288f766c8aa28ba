/**
 * The log's two Lua scripts (docs/simulator.md#replicas-on-redis).
 *
 * APPEND, which carries every request of a store-backed simulator: it stamps a replica's requests
 * (one or a batch, append-batch.ts) with Redis's own clock, numbers each, and appends them to the
 * log, atomically. The stamp is the real time the simulated clock runs on; it never goes back,
 * even if Redis's clock does, so every replica applying the log sees time move forward in log
 * order. The number (1, 2, 3 … never reused) lets a replica see that entries it has not applied
 * were trimmed away.
 *
 * KEYS[1] the log (a stream), KEYS[2] the last stamp, KEYS[3] the start state (genesis.ts),
 * KEYS[4] the last number; all share the store's hash tag, so the script runs on a Redis Cluster.
 * ARGV: the replica that sent them, then for each request its number there and the request.
 * Without the start state (Redis restarted without its data, or flushed) nothing is appended: the
 * replicas' state is no longer the store's, and the error says so. Answers how many were appended.
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
local c = tonumber(redis.call('GET', KEYS[4]) or '0')
for i = 2, #ARGV, 2 do
  c = c + 1
  redis.call('XADD', KEYS[1], '*', 's', stamp, 'c', string.format('%.0f', c), 'o', ARGV[1], 'n', ARGV[i], 'p', ARGV[i + 1])
end
redis.call('SET', KEYS[4], string.format('%.0f', c))
return (#ARGV - 1) / 2
`;

/**
 * CHECKPOINT: keeps a replica's whole state as it stood after one entry (checkpoint.ts), unless a
 * later one is kept already, and trims the log before the checkpoint it replaces. A replica
 * starting later begins at the checkpoint instead of the first entry, and the log stays about two
 * checkpoints long; a replica still reading before the previous checkpoint finds a gap in the
 * numbers and starts again from the newest one.
 *
 * KEYS[1] the checkpoint (a hash: c the entry's number, id its stream id, state), KEYS[2] the log.
 * ARGV: the entry's number, its id, the state (JSON). Answers 1 when kept, 0 when a later one was.
 */
export const CHECKPOINT_SCRIPT = `
local kept = tonumber(redis.call('HGET', KEYS[1], 'c') or '0')
if kept >= tonumber(ARGV[1]) then return 0 end
local previous = redis.call('HGET', KEYS[1], 'id')
redis.call('HSET', KEYS[1], 'c', ARGV[1], 'id', ARGV[2], 'state', ARGV[3])
if previous then redis.call('XTRIM', KEYS[2], 'MINID', previous) end
return 1
`;
