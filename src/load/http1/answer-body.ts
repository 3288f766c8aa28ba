/**
 * An answer's body as the service sent it: decoded from gzip, deflate or br (keysim asks for
 * `Accept-Encoding: identity`, but a proxy may compress anyway), then judged by the one rule of
 * what the service's answer is (../service-answer.ts). Anything else — a firewall's HTML page, a
 * truncated or garbled body, an unknown coding — is not evidence of what the service did: a
 * protocol error of unknown effect, like a transport error (counted as an error, never recorded
 * as an outcome).
 */
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { type ApiStyle, readServiceAnswer } from '../answers/index.js';
import { MAX_BODY_BYTES } from './response-parser.js';

/** The request header every keysim client sends: answers uncompressed, please. */
export const ACCEPT_IDENTITY = 'accept-encoding: identity\r\n';

/** The answer's body is not the service's JSON ('other'; its effect is unknown). */
export class NotServiceAnswerError extends Error {
  readonly code = 'KEYSIM_BAD_RESPONSE';

  constructor(
    readonly status: number,
    readonly contentType: string | undefined,
    readonly why: string,
    body: Buffer,
  ) {
    super(
      `The target answered ${status} (${contentType ?? 'no content-type'}) with a body that is not the service's JSON (${why}): ${firstBytes(body)}. Is a proxy or firewall in front of the service answering instead of it?`,
    );
    this.name = 'NotServiceAnswerError';
  }
}

/** The first bytes of a body, printable, for a message. */
export function firstBytes(body: Buffer, max = 80): string {
  if (body.length === 0) return 'an empty body';
  const text = body.toString('latin1', 0, Math.min(body.length, max)).replace(/[^\x20-\x7e]/g, '.');
  return `"${text}${body.length > max ? '…' : ''}"`;
}

/** A body that decodes past the limit of its call: a protocol error naming the limit. */
export class DecodedBodyTooLargeError extends Error {
  readonly code = 'KEYSIM_BAD_RESPONSE';

  constructor(
    readonly limitBytes: number,
    coding: string,
  ) {
    super(
      `The target's ${coding}-compressed answer decodes to more than ${limitBytes} bytes (${mib(limitBytes)} MiB), the body limit of this call: keysim asked for an uncompressed answer (Accept-Encoding: identity); a proxy compressed it anyway, or the answer is not the service's.`,
    );
    this.name = 'DecodedBodyTooLargeError';
  }
}

function mib(bytes: number): string {
  return String(Math.round((bytes / 1024 / 1024) * 10) / 10);
}

/**
 * The body with its content codings undone (gzip, x-gzip, deflate, br; identity as is), bounded by
 * `maxBytes` — the same limit as the call's raw body (MAX_BODY_BYTES for load requests, the
 * set-up client's larger one for the simulator's snapshots): past it, DecodedBodyTooLargeError.
 * Throws NotServiceAnswerError for a coding it does not know or bytes that do not decode.
 */
export function decodeBody(
  status: number,
  contentType: string | undefined,
  contentEncoding: string | undefined,
  body: Buffer,
  maxBytes: number = MAX_BODY_BYTES,
): Buffer {
  if (contentEncoding === undefined) return body;
  let out = body;
  // Codings are listed in the order they were applied: undo them from the last.
  const codings = contentEncoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  for (const coding of codings.reverse()) {
    const options = { maxOutputLength: maxBytes };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') out = gunzipSync(out, options);
      else if (coding === 'br') out = brotliDecompressSync(out, options);
      else if (coding === 'deflate') out = inflateDeflate(out, options);
      else throw new NotServiceAnswerError(status, contentType, `content-encoding ${coding}, which keysim cannot decode`, body);
    } catch (error) {
      if (error instanceof NotServiceAnswerError) throw error;
      if (tooLarge(error)) throw new DecodedBodyTooLargeError(maxBytes, coding);
      throw new NotServiceAnswerError(
        status,
        contentType,
        `content-encoding ${coding} that does not decode: ${error instanceof Error ? error.message : String(error)}`,
        body,
      );
    }
  }
  return out;
}

/** zlib's maxOutputLength was reached ("Cannot create a Buffer larger than N bytes"). */
function tooLarge(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_BUFFER_TOO_LARGE';
}

/** deflate is zlib-wrapped by the standard, raw by some servers: both are read. */
function inflateDeflate(body: Buffer, options: { maxOutputLength: number }): Buffer {
  try {
    return inflateSync(body, options);
  } catch (error) {
    if (tooLarge(error)) throw error;
    return inflateRawSync(body, options);
  }
}

/** Whether the (decoded) body starts like a JSON object, skipping leading white space. */

/**
 * The body as the service's answer (JSON in its envelope for `style`: service-answer.ts); throws
 * NotServiceAnswerError for anything else.
 */
export function serviceJsonOf(status: number, contentType: string | undefined, body: Buffer, style: ApiStyle = 'v2'): unknown {
  const read = readServiceAnswer(status, body, style);
  if (!read.service) throw new NotServiceAnswerError(status, contentType, read.why, body);
  return read.body;
}
