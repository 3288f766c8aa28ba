/**
 * The Nagle stall of `--workers N` (docs/benchmarks.md#serve---workers): the connections the
 * owner accepts and hands to its workers must carry TCP_NODELAY, which node:http sets only on
 * connections its own server accepts. Without it a worker's pipelined answers waited for the
 * client's delayed ACK, ~40 ms a round. Read from node's record of the option on the accepted
 * socket, so nothing here depends on the machine's pace.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import { describe, expect, test } from 'vitest';
import { ownerListener } from '../../src/http/cluster.js';

/** Whether node set TCP_NODELAY on this socket (its own record, kept as a symbol-keyed field). */
function noDelayOf(socket: Socket): unknown {
  const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
  if (key === undefined) throw new Error('this node keeps no kSetNoDelay record on a socket: read TCP_NODELAY another way');
  return (socket as unknown as Record<symbol, unknown>)[key];
}

/** Accepts one connection on `make`'s server and gives the accepted socket's TCP_NODELAY. */
async function acceptedNoDelay(make: (onConnection: (socket: Socket) => void) => Server): Promise<unknown> {
  let server: Server | undefined;
  const accepted = new Promise<Socket>((resolve) => {
    server = make(resolve);
  });
  const listening = server as unknown as Server;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  const { port } = listening.address() as { port: number };
  const client = connect(port, '127.0.0.1');
  try {
    const socket = await accepted;
    const value = noDelayOf(socket);
    socket.destroy();
    return value;
  } finally {
    client.destroy();
    await new Promise<void>((resolve) => listening.close(() => resolve()));
  }
}

describe('connections handed to HTTP workers', () => {
  test('nagle delayed-ACK stall: a connection the owner accepts for its workers has TCP_NODELAY', async () => {
    expect(await acceptedNoDelay(ownerListener)).toBe(true);
  });

  test('the reading tells the two apart: a plain net server leaves TCP_NODELAY off', async () => {
    expect(await acceptedNoDelay((onConnection) => createServer({ pauseOnConnect: true }, onConnection))).toBe(false);
  });
});
