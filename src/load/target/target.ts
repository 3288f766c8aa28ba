/**
 * Where the load goes: the embedded simulator (in its own worker thread, on a free loopback
 * port) or a live deployment given by URL (root key from KEYSIM_ROOT_KEY).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SimulatorOptions } from '../../http/index.js';
import { decodeBody } from '../http1/index.js';
import { Http1Client } from '../http1/index.js';

export interface Target {
  kind: 'simulator' | 'live';
  /** Base URL without credentials. */
  url: string;
  rootKey: string;
  /** A simulator reached over a URL (keysim serve), whose state outlives the run; absent or false for the embedded one. */
  remote?: boolean;
  /** Whether the service clock can be moved (the simulator's admin surface). */
  clockControl: boolean;
  /** PEM certificates of the CA(s) to trust for an https target (--ca). */
  ca?: string | undefined;
  close(): Promise<void>;
}

/** The ESM entry of tsx's API, read from its package's `exports` (only needed when running from sources). */
function tsxEsmApiUrl(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  const entry = manifest.exports['./esm/api']?.import.default;
  if (entry === undefined) throw new Error('tsx does not export ./esm/api: run the built keysim (npm run build) instead of the sources.');
  return pathToFileURL(join(dirname(manifestPath), entry)).href;
}

/** Starts the simulator in a worker thread and waits until it listens. */
export async function startEmbeddedSimulator(options: SimulatorOptions = {}): Promise<Target> {
  // Under the TypeScript sources (tests, tsx) the worker first registers tsx's loader (Node 20
  // ignores `--import` in a worker's execArgv); the built JavaScript needs nothing.
  const fromSource = import.meta.url.endsWith('.ts');
  const workerUrl = new URL(fromSource ? './sim-worker.ts' : './sim-worker.js', import.meta.url);
  const register = fromSource ? `const { register } = await import(${JSON.stringify(tsxEsmApiUrl())}); register();` : '';
  const worker = new Worker(`(async () => { ${register} await import(${JSON.stringify(workerUrl.href)}); })();`, {
    eval: true,
    workerData: { host: '127.0.0.1', port: 0, clock: 'manual', ...options },
  });
  const ready = await new Promise<{ url: string; rootKey: string }>((resolve, reject) => {
    const onError = (error: Error) => reject(new Error(`the embedded simulator failed to start: ${error.message}`));
    worker.once('error', onError);
    worker.once('exit', (code) => reject(new Error(`the embedded simulator exited (code ${code}) before it was ready`)));
    worker.once('message', (message: { type?: string; url?: string; rootKey?: string }) => {
      if (message.type === 'ready' && typeof message.url === 'string' && typeof message.rootKey === 'string') {
        worker.off('error', onError);
        worker.removeAllListeners('exit');
        resolve({ url: message.url, rootKey: message.rootKey });
      } else {
        reject(new Error('the embedded simulator sent an unexpected first message'));
      }
    });
  });
  let closed = false;
  return {
    kind: 'simulator',
    url: ready.url,
    rootKey: ready.rootKey,
    clockControl: true,
    async close() {
      if (closed) return;
      closed = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('close');
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref());
      await Promise.race([exited, timeout]);
      await worker.terminate();
    },
  };
}

/** True for 127.0.0.0/8, ::1 and localhost: load that stays on this machine. */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * A live deployment. The URL must be http(s) without credentials in it (they would end up in
 * reports); the root key comes separately.
 */
export function liveTarget(urlText: string, rootKey: string, ca?: string): Target {
  const url = new URL(urlText);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--target must be an http(s) URL, got ${url.protocol}`);
  if (url.username !== '' || url.password !== '') {
    throw new Error('--target must not contain credentials; pass the root key in KEYSIM_ROOT_KEY.');
  }
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  return { kind: 'live', url: base, rootKey, clockControl: false, ...(ca === undefined ? {} : { ca }), close: async () => undefined };
}

/** The URL as reports show it: no user info, no query. */
export function displayUrl(urlText: string): string {
  try {
    const url = new URL(urlText);
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(invalid URL)';
  }
}

/** A URL target and, when worth saying, one line on how it was recognised. */
export interface DetectedTarget {
  target: Target;
  note?: string;
}

/**
 * What a URL target is. keysim's own server (`keysim serve`) is a simulator wherever it runs: a
 * target that answers `GET /_sim/health` and accepts the root key on the admin surface gets the
 * simulator's treatment (clock scenarios, namespaces through the admin surface, the oracle),
 * remote — its state outlives the run, so what a run creates is deleted at the end as on a live
 * deployment. A simulator that refuses this root key on its admin surface (403: the key is not
 * its operator's) is treated as a live deployment, and the note says so. Anything else is live.
 */
export async function detectUrlTarget(urlText: string, rootKey: string, timeoutMs = 5_000, ca?: string): Promise<DetectedTarget> {
  const live = liveTarget(urlText, rootKey, ca);
  const client = new Http1Client(live.url, { timeoutMs, connections: 1, ca });
  try {
    const health = await client.request({ method: 'GET', path: '/_sim/health', retry: true });
    // A proxy may compress what keysim never asked to be compressed: decoded, the simulator is still recognised.
    const healthBody = decodeBody(health.status, health.contentType, health.contentEncoding, health.body);
    if (health.status !== 200 || !/"status"\s*:\s*"ok"/.test(healthBody.toString('utf8'))) return { target: live };
    const admin = await client.request({ method: 'POST', path: '/_sim/clock.get', headers: { authorization: `Bearer ${rootKey}` }, body: '{}', retry: true });
    if (admin.status >= 200 && admin.status < 300) return { target: { ...live, kind: 'simulator', remote: true, clockControl: true } };
    if (admin.status === 403) {
      return {
        target: live,
        note: `${live.url} is a keysim simulator, but this root key is not its operator's (its admin surface answered 403): treated as a live deployment (no clock control, no admin surface).`,
      };
    }
    return { target: live };
  } catch {
    // Not answering here is for the reachability check to report, with its reason.
    return { target: live };
  } finally {
    await client.close();
  }
}
