/**
 * Helpers for the load-runner tests: tiny stub HTTP servers on 127.0.0.1 and a port with nothing
 * listening; the hand-built RunReport, small load settings and run options of `report-fixture.ts` re-exported.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export {
  type OperationFixture,
  type ReportFixture,
  type RunOptionsOverrides,
  loadSettings,
  minimalReport,
  operationStats,
  runOptions,
} from './report-fixture.js';

export interface StubServer {
  url: string;
  server: Server;
  /** Requests received so far, by path. */
  paths: string[];
  /** Stops listening and cuts every open connection (a target that dies). */
  kill(): Promise<void>;
}

/** The body of a successful v2 answer with empty data. */
export const OK_BODY = JSON.stringify({ meta: { requestId: 'req_x' }, data: {} });

/** A node:http server on 127.0.0.1, port 0; `handler` answers (default: 200 OK_BODY at once). */
export async function startStubServer(handler?: (req: IncomingMessage, res: ServerResponse) => void): Promise<StubServer> {
  const paths: string[] = [];
  const answer =
    handler ??
    ((_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    });
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    // Read the body before answering, as a real service does.
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let killed = false;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    paths,
    async kill() {
      if (killed) return;
      killed = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** A firewall's page, what a proxy in front of the service may answer (even with a 200). */
export const FIREWALL_PAGE = '<html><head><title>Access denied</title></head><body>Blocked by the firewall</body></html>';

/** A starter of stub servers for the tests of a file, each server killed after the test that started it. */
export function stubServersPerTest(): (handler: (req: IncomingMessage, res: ServerResponse) => void) => Promise<StubServer> {
  let servers: StubServer[] = [];
  afterEach(async () => {
    for (const s of servers) await s.kill();
    servers = [];
  });
  return async (handler) => {
    const s = await startStubServer(handler);
    servers.push(s);
    return s;
  };
}

/** A handler answering the pre-flight probe like the service, and everything else by `rest`. */
export function serviceProbeThen(rest: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.endsWith('/v2/identities.listIdentities')) res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    else rest(req, res);
  };
}

/** A loopback port on which nothing listens (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
