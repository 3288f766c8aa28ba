/**
 * The simulator's connection to its Redis store (node-redis): one client, or a cluster client when
 * the store is a Redis Cluster. It runs the log's scripts (log-script.ts) with EVALSHA, falling
 * back to EVAL when Redis answers NOSCRIPT (after a restart or a SCRIPT FLUSH), and any other
 * command raw. Commands sent while the connection is down fail at once (no offline queue), so a
 * request is answered 503 instead of waiting; the client reconnects by itself.
 */
import { createClient, createCluster, defineScript, type CommandParser } from 'redis';
import type { StoreUrl } from './store-url.js';
import { APPEND_SCRIPT, CHECKPOINT_SCRIPT } from './log-script.js';
import type { PendingCall } from './append-batch.js';

/** The keys of a store's log (log-script.ts). */
export interface LogKeys {
  stream: string;
  stamp: string;
  genesis: string;
  /** The last entry's number. */
  count: string;
  /** The newest checkpoint. */
  checkpoint: string;
}

/** What the log needs from Redis. */
export interface RedisLink {
  /** Appends these requests of one replica to the log, in order, in one call of the append script. */
  append(keys: LogKeys, origin: string, calls: readonly PendingCall[]): Promise<unknown>;
  /** Keeps a checkpoint after entry `count` (the checkpoint script); answers whether it was kept. */
  checkpoint(keys: LogKeys, count: number, id: string, state: string): Promise<boolean>;
  /** A raw command on the node holding `key`. */
  command(key: string, args: readonly string[]): Promise<unknown>;
  /** A second connection to the same store, for a blocking read that must not hold up the first. */
  duplicate(): Promise<RedisLink>;
  close(): Promise<void>;
}

const appendScript = defineScript({
  SCRIPT: APPEND_SCRIPT,
  NUMBER_OF_KEYS: 4,
  parseCommand(parser: CommandParser, keys: LogKeys, origin: string, calls: readonly PendingCall[]) {
    parser.pushKeys([keys.stream, keys.stamp, keys.genesis, keys.count]);
    parser.push(origin);
    for (const call of calls) parser.push(String(call.callNumber), call.payload);
  },
  transformReply: undefined as unknown as () => number,
});

const checkpointScript = defineScript({
  SCRIPT: CHECKPOINT_SCRIPT,
  NUMBER_OF_KEYS: 2,
  parseCommand(parser: CommandParser, keys: LogKeys, count: string, id: string, state: string) {
    parser.pushKeys([keys.checkpoint, keys.stream]);
    parser.push(count, id, state);
  },
  transformReply: undefined as unknown as () => number,
});

const SCRIPTS = { append: appendScript, checkpoint: checkpointScript };

/**
 * Reconnection: quickly at first, then at most a second apart, for ever once connected. Before
 * the first connection three failures give up, so a wrong URL is an error at the start, not a
 * silent wait.
 */
class Reconnect {
  connected = false;
  readonly strategy = (retries: number, cause: Error): number | Error => {
    if (!this.connected && retries >= 3) return cause;
    return Math.min(50 * (retries + 1), 1_000);
  };
}

type OnError = (error: Error) => void;

async function singleLink(url: string, onError: OnError): Promise<RedisLink> {
  const reconnect = new Reconnect();
  const client = createClient({
    url,
    RESP: 2,
    disableOfflineQueue: true,
    socket: { connectTimeout: 5_000, reconnectStrategy: reconnect.strategy },
    scripts: SCRIPTS,
  });
  client.on('error', onError);
  await client.connect();
  reconnect.connected = true;
  return {
    append: (keys, origin, calls) => client.append(keys, origin, calls),
    checkpoint: async (keys, count, id, state) => (await client.checkpoint(keys, String(count), id, state)) === 1,
    command: (_key, args) => client.sendCommand([...args]),
    duplicate: () => singleLink(url, onError),
    close: async () => {
      client.destroy();
    },
  };
}

async function clusterLink(store: Extract<StoreUrl, { kind: 'cluster' }>, onError: OnError): Promise<RedisLink> {
  const reconnect = new Reconnect();
  const cluster = createCluster({
    rootNodes: store.nodes,
    RESP: 2,
    defaults: {
      ...(store.username === undefined ? {} : { username: store.username }),
      ...(store.password === undefined ? {} : { password: store.password }),
      disableOfflineQueue: true,
      socket: { connectTimeout: 5_000, reconnectStrategy: reconnect.strategy },
    },
    scripts: SCRIPTS,
  });
  cluster.on('error', onError);
  await cluster.connect();
  reconnect.connected = true;
  return {
    append: (keys, origin, calls) => cluster.append(keys, origin, calls),
    checkpoint: async (keys, count, id, state) => (await cluster.checkpoint(keys, String(count), id, state)) === 1,
    command: (key, args) => cluster.sendCommand(key, false, [...args]),
    duplicate: () => clusterLink(store, onError),
    close: async () => {
      cluster.destroy();
    },
  };
}

/** Connects to the store; rejects with the reason when it cannot be reached. */
export function connectRedis(store: StoreUrl, onError: OnError): Promise<RedisLink> {
  return store.kind === 'cluster' ? clusterLink(store, onError) : singleLink(store.url, onError);
}
