/**
 * The baseline of the HTTP benchmark: the least a JSON API server on node:http must do per
 * request — read the body, parse it as JSON, answer JSON — and nothing else, so the simulator's
 * throughput can be read as a share of what the platform allows on this machine.
 *
 * Its answers are fixed bytes copied from the simulator's real answers to the benchmark's
 * requests (same length, same shape, same headers), so that both servers write the same bytes per
 * answer and the comparison measures the work, not the size of the answer.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { coalesceWrites } from '../src/http/write-coalescing.js';

/** A request id of the simulator's length (`req_` + 16 hex + a 6-character counter). */
const REQUEST_ID = 'req_97fa2041b7d8b07c000003';

/** The simulator's answer to `keys.verifyKey` on the benchmark's key (158 bytes). */
export const BARE_VERIFY_ANSWER = `{"meta":{"requestId":"${REQUEST_ID}"},"data":{"valid":true,"code":"VALID","keyId":"key_4WDWQmGsaTTrAHcvn","enabled":true,"credits":999999999999}}`;
/** The simulator's answer to `ratelimit.limit` on the benchmark's namespace (138 bytes). */
export const BARE_LIMIT_ANSWER = `{"meta":{"requestId":"${REQUEST_ID}"},"data":{"limit":1000000000,"remaining":999999999,"reset":1795629660000,"success":true}}`;

const VERIFY_BYTES = Buffer.byteLength(BARE_VERIFY_ANSWER);
const LIMIT_BYTES = Buffer.byteLength(BARE_LIMIT_ANSWER);

/** `coalesceWrites`: with the simulator's write coalescing (src/http/write-coalescing.ts), for comparison only. */
export function createBareServer(options: { coalesceWrites?: boolean } = {}): Server {
  const server = createServer((req, res) => {
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
      const limit = req.url === '/v2/ratelimit.limit';
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': limit ? LIMIT_BYTES : VERIFY_BYTES,
        'x-request-id': REQUEST_ID,
      });
      res.end(limit ? BARE_LIMIT_ANSWER : BARE_VERIFY_ANSWER);
    });
  });
  if (options.coalesceWrites === true) server.on('connection', coalesceWrites);
  return server;
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
