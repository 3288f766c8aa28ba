/**
 * The answer to a request node:http cannot parse (malformed, or headers beyond its size limit):
 * the error envelope with a request id instead of a dropped socket or an empty 400, then the
 * connection closes.
 *
 * The parser stops at the first byte it cannot read, after the requests before it on the same
 * connection, whose answers may still be in the making (a body being read, a call waiting in the
 * engine owner, an injected latency). The 400 goes after them: a malformed request loses only
 * itself, never the answers owed to the requests a client pipelined before it.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorTypeUrl } from './problems.js';

/** node:http's socket: the response it writes now, or none (the rest of its queue follows it). */
type HttpSocket = Duplex & { _httpMessage?: ServerResponse | null };

/** Connections whose 400 is decided: more unreadable bytes on them need no second one. */
const refused = new WeakSet<Duplex>();

/** Answers the unparsable request on `socket` once the answers owed before it are written. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, requestId: string, errorsUrl: string): void {
  if (refused.has(socket)) return;
  refused.add(socket);
  afterOwedAnswers(socket as HttpSocket, () => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    writeClientError(error, socket, requestId, errorsUrl);
  });
}

/**
 * Runs `then` when node:http has no answer left to write on `socket`: it writes its queue one
 * response at a time, the next taking the socket when the one before finishes (its own 'finish'
 * listener runs before ours, so the next is in place when we look again).
 */
function afterOwedAnswers(socket: HttpSocket, then: () => void): void {
  const owed = socket._httpMessage;
  // A request whose own body could not be parsed will never be answered: nothing to wait for.
  // (`writableFinished` is no sign: it holds once the bytes are with the socket, before the
  // 'finish' that hands the socket to the next answer.)
  if (owed === undefined || owed === null || socket.destroyed || owed.req?.complete === false) {
    then();
    return;
  }
  const next = () => {
    owed.off('finish', next);
    owed.off('close', next);
    socket.off('close', next);
    afterOwedAnswers(socket, then);
  };
  owed.once('finish', next);
  owed.once('close', next);
  socket.once('close', next);
}

function writeClientError(error: NodeJS.ErrnoException, socket: Duplex, requestId: string, errorsUrl: string): void {
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const title = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
  const body = JSON.stringify({
    meta: { requestId },
    error: {
      title,
      detail: tooLarge ? 'The request line or headers are larger than the server accepts.' : 'The request could not be parsed as HTTP.',
      status,
      type: errorTypeUrl(tooLarge ? 'err:service:bad_request:request_headers_too_large' : 'err:service:application:invalid_input', errorsUrl),
      errors: [],
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  );
}
