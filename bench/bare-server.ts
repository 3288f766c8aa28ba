/**
 * The baseline of the HTTP benchmark: the least a JSON API server on node:http must do per
 * request — read the body, parse it as JSON, answer a fixed small JSON — and nothing else, so
 * the simulator's throughput can be read as a share of what the platform allows on this machine.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The fixed answer (the load generator checks every response contains `"ok":true`). */
export const BARE_ANSWER = '{"ok":true}';
const ANSWER_BYTES = Buffer.byteLength(BARE_ANSWER);

export function createBareServer(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
      try {
        JSON.parse(text);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json', 'content-length': 2 });
        res.end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': ANSWER_BYTES });
      res.end(BARE_ANSWER);
    });
  });
}

/** Starts the bare server on `host`, a free port; returns its base URL. */
export async function listenBare(server: Server, host = '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return `http://${host}:${port}`;
}
