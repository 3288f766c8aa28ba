/**
 * The simulator behind a reverse proxy: idle keep-alive connections kept longer than a proxy keeps
 * its upstream ones (a server closing first makes the proxy answer 502), and the Host names a
 * proxy passes on allowed by name while every other Host still gets 421 (the DNS-rebinding
 * protection of a loopback server). In one process, with `workers`, and through `keysim serve`.
 * Real sockets on 127.0.0.1; the configured values are asserted, never a timing.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, test } from 'vitest';
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, allowedHostEntry, createSimulator, createSimulatorServer, hostAllowed } from '../../src/http/index.js';
import { ApiRateLimiter } from '../../src/http/api-rate-limit.js';
import { FaultInjector } from '../../src/http/faults.js';
import { Journal } from '../../src/http/journal.js';
import { OPERATIONS } from '../../src/http/operations.js';
import type { RouteContext } from '../../src/http/route.js';
import { nodeSha256 } from '../../src/http/simulator.js';
import { cleanEnv, cleanUpCli, cli, startCli, waitUntil } from '../helpers/cli.js';
import { makeEngine } from '../helpers/engine.js';

/** The state a server is built on, for asserting on the server object itself. */
function routeContext(): RouteContext {
  const { engine, clock } = makeEngine();
  return {
    engine,
    clock,
    apiRateLimit: new ApiRateLimiter(),
    faults: new FaultInjector(engine, 1, OPERATIONS),
    journal: new Journal(nodeSha256),
    reset: () => undefined,
    operatorRootKeyHash: 'x',
  };
}

interface Answer {
  status: number;
  keepAlive: string | undefined;
  body: unknown;
}

/** GET /_sim/health with the given Host header, on a connection of its own. */
function health(url: string, host: string): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port: Number(port), path: '/_sim/health', method: 'GET', headers: { host, connection: 'keep-alive' }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          // The connection was asked to stay open: closed here, so that nothing lingers.
          req.destroy();
          const keepAlive = res.headers['keep-alive'];
          resolve({
            status: res.statusCode ?? 0,
            keepAlive: typeof keepAlive === 'string' ? keepAlive : undefined,
            body: text === '' ? undefined : (JSON.parse(text) as unknown),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const ALLOWED = ['sim.internal', 'api.test:8443'];

/** An allowed name is answered on any port, a NAME:PORT on that port only; the rest gets 421, saying how to allow it. */
async function expectHostsJudged(url: string): Promise<void> {
  const port = new URL(url).port;
  for (const host of ['sim.internal', 'sim.internal:80', `sim.internal:${port}`, 'SIM.Internal:443', 'api.test:8443', `127.0.0.1:${port}`]) {
    expect((await health(url, host)).status, host).toBe(200);
  }
  for (const host of ['evil.example', `evil.example:${port}`, 'api.test', 'api.test:8444', 'sim.internal.evil.example', 'evil-sim.internal']) {
    const answer = await health(url, host);
    expect(answer.status, host).toBe(421);
    expect(JSON.stringify(answer.body)).toContain('--allow-host');
  }
}

afterAll(() => cleanUpCli());

describe('behind a reverse proxy', () => {
  test('a loopback simulator answers the Host names it is told to allow, and still refuses an unlisted one with 421', async () => {
    const sim = await createSimulator({ allowedHosts: ALLOWED });
    try {
      await expectHostsJudged(sim.url);
    } finally {
      await sim.close();
    }
  });

  test('allowed Host names hold behind --workers too', async () => {
    const sim = await createSimulator({ allowedHosts: ALLOWED, workers: 2, keepAliveTimeoutMs: 90_000 });
    try {
      await expectHostsJudged(sim.url);
      expect((await health(sim.url, 'sim.internal')).keepAlive).toBe('timeout=90');
    } finally {
      await sim.close();
    }
  }, 60_000);

  test('an allowed host that is not a Host header value is refused, saying what is expected', async () => {
    for (const bad of ['http://sim.internal', 'sim.internal/path', 'sim.internal:0', 'sim.internal:99999', '', '*', 'a b']) {
      const entry = allowedHostEntry(bad);
      expect(entry.ok, bad).toBe(false);
      if (!entry.ok) expect(entry.message).toMatch(/e\.g\. sim\.internal/);
    }
    await expect(createSimulator({ allowedHosts: ['http://sim.internal'] })).rejects.toThrow(/allowedHosts: .*http:\/\/sim\.internal/);
    expect(hostAllowed(new Set(['[fd00::1]:*']), '[FD00::1]:8080')).toBe(true);
    expect(hostAllowed(new Set(['[fd00::1]:*']), '[fd00::2]:8080')).toBe(false);
  });

  test("serve's idle keep-alive outlives a proxy's 60 s upstream keep-alive by default, and its headers timeout outlives that", async () => {
    expect(DEFAULT_KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
    const { server } = createSimulatorServer(routeContext());
    expect(server.keepAliveTimeout).toBe(DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    expect(server.requestTimeout).toBeGreaterThanOrEqual(server.headersTimeout);
    const long = createSimulatorServer(routeContext(), { keepAliveTimeoutMs: 600_000 }).server;
    expect(long.keepAliveTimeout).toBe(600_000);
    expect(long.headersTimeout).toBeGreaterThan(600_000);
    expect(long.requestTimeout).toBeGreaterThanOrEqual(long.headersTimeout);
  });

  test('answers say the keep-alive timeout in Keep-Alive: timeout=N, the default and a configured one', async () => {
    const byDefault = await createSimulator();
    const configured = await createSimulator({ keepAliveTimeoutMs: 120_000 });
    try {
      expect((await health(byDefault.url, `127.0.0.1:${new URL(byDefault.url).port}`)).keepAlive).toBe(`timeout=${DEFAULT_KEEP_ALIVE_TIMEOUT_MS / 1000}`);
      expect((await health(configured.url, `127.0.0.1:${new URL(configured.url).port}`)).keepAlive).toBe('timeout=120');
    } finally {
      await byDefault.close();
      await configured.close();
    }
    await expect(createSimulator({ keepAliveTimeoutMs: 0 })).rejects.toThrow(/keepAliveTimeoutMs must be from 1000/);
  });

  test('keysim serve --keep-alive and --allow-host (with KEYSIM_ALLOWED_HOSTS) set both', async () => {
    const server = startCli(
      ['serve', '--port', '0', '--keep-alive', '90', '--allow-host', 'sim.internal'],
      cleanEnv({ KEYSIM_ROOT_KEY: 'root_proxy_test_123456', KEYSIM_ALLOWED_HOSTS: 'edge.test, other.test:8080' }),
    );
    try {
      await waitUntil(
        () => /listening on (http:\/\/\S+)/.test(server.stdout()) && /Host names answered/.test(server.stdout()),
        'the simulator to listen',
        server,
      );
      const url = (/listening on (http:\/\/\S+)/.exec(server.stdout()) as RegExpExecArray)[1] as string;
      expect(server.stdout()).toContain('idle keep-alive connections kept 90 s');
      const ok = await health(url, 'sim.internal');
      expect(ok.status).toBe(200);
      expect(ok.keepAlive).toBe('timeout=90');
      expect((await health(url, 'edge.test:443')).status).toBe(200);
      expect((await health(url, 'other.test:8080')).status).toBe(200);
      expect((await health(url, 'other.test:8081')).status).toBe(421);
      expect((await health(url, 'evil.example')).status).toBe(421);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 60_000);

  test('keysim serve refuses a bad --allow-host or --keep-alive with exit 2 and says why', async () => {
    const badHost = await cli(['serve', '--port', '0', '--allow-host', 'http://sim.internal/'], cleanEnv({}));
    expect(badHost.code).toBe(2);
    expect(badHost.stderr).toMatch(/--allow-host: "http:\/\/sim\.internal\/" is not a host/);
    const badKeepAlive = await cli(['serve', '--port', '0', '--keep-alive', '0'], cleanEnv({}));
    expect(badKeepAlive.code).toBe(2);
    expect(badKeepAlive.stderr).toMatch(/--keep-alive must be a whole number of seconds from 1/);
  }, 60_000);
});
