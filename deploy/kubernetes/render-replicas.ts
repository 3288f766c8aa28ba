/**
 * Renders the simulator's replicas (keysim-replicas.yaml) and, when no external store is given,
 * their Redis (keysim-redis.yaml): `render.ts --replicas N [--store URL]` calls it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseStoreUrl } from '../../src/http/store/store-url.js';

export const REPLICAS_TEMPLATE = fileURLToPath(new URL('./keysim-replicas.yaml', import.meta.url));
export const REDIS_TEMPLATE = fileURLToPath(new URL('./keysim-redis.yaml', import.meta.url));
/** The store of the replicas when none is given: the Service of keysim-redis.yaml. */
export const IN_CLUSTER_STORE = 'redis://keysim-redis:6379';

export interface ReplicasOptions {
  replicas: number;
  image: string;
  /** An external Redis (redis://, rediss://, redis-cluster://); undefined: a Redis pod of its own. */
  store?: string;
}

export function renderReplicas(options: ReplicasOptions): string {
  if (!Number.isSafeInteger(options.replicas) || options.replicas < 1)
    throw new Error(`--replicas must be a whole number of 1 or more, got ${String(options.replicas)}.`);
  if (options.store !== undefined) {
    const url = parseStoreUrl(options.store);
    if (!url.ok) throw new Error(url.message);
  }
  const values: Record<string, string> = {
    __REPLICAS__: String(options.replicas),
    __IMAGE__: options.image,
    // A JSON string is a YAML double-quoted scalar: any URL stays one value.
    __STORE__: JSON.stringify(options.store ?? IN_CLUSTER_STORE),
  };
  const replicas = readFileSync(REPLICAS_TEMPLATE, 'utf8').replace(/__[A-Z_]+__/g, (name) => {
    const value = values[name];
    if (value === undefined) throw new Error(`the template has an unknown placeholder ${name}`);
    return value;
  });
  return options.store === undefined ? `${readFileSync(REDIS_TEMPLATE, 'utf8')}---\n${replicas}` : replicas;
}
