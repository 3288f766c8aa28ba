/**
 * A small reverse proxy on 127.0.0.1 (real node:http, port 0) in front of a service, that loses
 * some answers the way a proxy does in production: for the requests `lose` picks, it forwards the
 * request (the service executes it) and then either destroys the client's connection without an
 * answer, or answers 504 with an HTML page of its own (a gateway that timed out). Everything else
 * is passed through unchanged. The Host sent upstream is the upstream's own, as nginx sends by
 * default (`proxy_set_header Host $proxy_host`).
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Loss = 'drop' | '504';

export interface LossyProxy {
  url: string;
  /** Answers lost so far, by kind and operation path (e.g. `/v2/keys.verifyKey`). */
  lost: Array<{ kind: Loss; path: string }>;
  close(): Promise<void>;
}

/**
 * `lose(path, n, body)`: called for every request with its path, its number among the requests of
 * that path (1, 2, …) and its body; the loss to inflict after forwarding it, or undefined to pass
 * it through.
 */
export async function startLossyProxy(upstream: string, lose: (path: string, n: number, body: string) => Loss | undefined): Promise<LossyProxy> {
  const target = new URL(upstream);
  const seen = new Map<string, number>();
  const lost: LossyProxy['lost'] = [];
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const path = req.url ?? '/';
    const n = (seen.get(path) ?? 0) + 1;
    seen.set(path, n);
    const loss = lose(path, n, body.toString('utf8'));
    const headers = { ...req.headers, host: target.host };
    const up = request({ host: target.hostname, port: target.port, method: req.method, path, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        if (loss !== undefined) lost.push({ kind: loss, path });
        if (loss === 'drop') {
          // The service has answered; the client never hears of it.
          req.socket.destroy();
          return;
        }
        if (loss === '504') {
          res.writeHead(504, { 'content-type': 'text/html' }).end('<html><body><h1>504 Gateway Time-out</h1></body></html>');
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
      });
    });
    up.on('error', () => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>502 Bad Gateway</html>'));
    up.end(body);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    lost,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
