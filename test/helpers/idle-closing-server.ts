/**
 * A real node:http server on 127.0.0.1 that closes a keep-alive connection after it has been idle
 * for `idleCloseMs`, without announcing it (no `Keep-Alive: timeout=N` hint, as nginx and many
 * proxies do), and counts the requests it answers, by path.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface IdleClosingServer {
  url: string;
  /** Requests answered, by URL path. */
  answered: Map<string, number>;
  /** Connections accepted. */
  connections: number;
  /** Connections the server closed for being idle. */
  idleCloses: number;
  close(): Promise<void>;
}

export async function idleClosingServer(
  idleCloseMs: number,
  answer: (req: IncomingMessage, body: string, res: ServerResponse) => void = (_req, _body, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"meta":{"requestId":"req_1"},"data":{"identities":[]}}');
  },
): Promise<IdleClosingServer> {
  const sockets = new Set<Socket>();
  const timers = new Map<Socket, NodeJS.Timeout>();
  const state = { answered: new Map<string, number>(), connections: 0, idleCloses: 0 };
  const server = createServer((req, res) => {
    const socket = req.socket;
    clearTimeout(timers.get(socket));
    // Setting Connection ourselves keeps node:http from adding its Keep-Alive hint.
    res.setHeader('connection', 'keep-alive');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      state.answered.set(path, (state.answered.get(path) ?? 0) + 1);
      answer(req, body, res);
    });
    res.on('finish', () => {
      timers.set(
        socket,
        setTimeout(() => {
          state.idleCloses++;
          socket.end();
        }, idleCloseMs),
      );
    });
  });
  // node:http's own idle close (keepAliveTimeout + 1 s) must not come first.
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      clearTimeout(timers.get(socket));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    answered: state.answered,
    get connections() {
      return state.connections;
    },
    get idleCloses() {
      return state.idleCloses;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
