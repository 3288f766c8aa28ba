/**
 * A target that counts what it holds: the real simulator, and a small real HTTP proxy in front of
 * it that hides `/_sim/*` (404), so that keysim treats it as a plain live deployment. What the
 * target holds is counted through the simulator's own snapshot.
 */
import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/http/simulator.js';

export interface Holdings {
  apis: number;
  keys: number;
  identities: number;
  overrides: number;
  /** Namespaces not deleted. */
  namespaces: number;
}

/** What the simulator holds now, per kind. */
export function holdings(sim: Simulator): Holdings {
  const s = sim.engine.snapshot();
  return {
    apis: s.apis.length,
    keys: s.keys.length,
    identities: s.identities.length,
    overrides: s.overrides.length,
    namespaces: s.namespaces.filter((n) => n.deletedAt === null).length,
  };
}

export interface LiveProxy {
  url: string;
  /** Answer 500 (without forwarding) to the paths for which this returns true. */
  failWhen: (path: string) => boolean;
  close(): Promise<void>;
}

/** A proxy on 127.0.0.1 port 0 to `upstream` that answers 404 to `/_sim/*`. */
export async function startLiveProxy(upstream: string): Promise<LiveProxy> {
  const target = new URL(upstream);
  const proxy: LiveProxy = { url: '', failWhen: () => false, close: async () => undefined };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    if (path.startsWith('/_sim/') || proxy.failWhen(path)) {
      req.resume();
      const hidden = path.startsWith('/_sim/');
      res.writeHead(hidden ? 404 : 500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          meta: { requestId: 'req_proxy' },
          error: {
            title: hidden ? 'Not Found' : 'Internal',
            detail: hidden ? 'no such route' : 'injected by the test proxy',
            status: hidden ? 404 : 500,
            type: hidden ? 'https://x/not_found' : 'https://x/internal',
          },
        }),
      );
      return;
    }
    const upstreamReq = request(
      // A reverse proxy names its upstream in Host, as the simulator's loopback Host check expects.
      { host: target.hostname, port: target.port, method: req.method, path, headers: { ...req.headers, host: target.host } },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstreamReq.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstreamReq);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

/** A real simulator on 127.0.0.1 port 0 (production compat: namespaces are created on first use, as a live deployment does). */
export function startCountingSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  return createSimulator({ clock: 'manual', compat: 'production', ...options });
}
