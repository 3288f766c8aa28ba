/**
 * What an answer's body must be to count as the service's: JSON (an object), as sent or decoded
 * from gzip, deflate or br. keysim asks for `Accept-Encoding: identity`, but a proxy may compress
 * anyway; anything else — a firewall's HTML page, a truncated or garbled body, an unknown coding —
 * is not evidence of what the service did: a protocol error of unknown effect, like a transport
 * error (counted as an error, never recorded as an outcome).
 */
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
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
    super(`The target answered ${status} (${contentType ?? 'no content-type'}) with a body that is not the service's JSON (${why}): ${firstBytes(body)}. Is a proxy or firewall in front of the service answering instead of it?`);
    this.name = 'NotServiceAnswerError';
  }
}

/** The first bytes of a body, printable, for a message. */
export function firstBytes(body: Buffer, max = 80): string {
  if (body.length === 0) return 'an empty body';
  const text = body.toString('latin1', 0, Math.min(body.length, max)).replace(/[^\x20-\x7e]/g, '.');
  return `"${text}${body.length > max ? '…' : ''}"`;
}

/**
 * The body with its content codings undone (gzip, x-gzip, deflate, br; identity as is), bounded by
 * the body limit; throws NotServiceAnswerError for a coding it does not know or bytes that do not decode.
 */
export function decodeBody(status: number, contentType: string | undefined, contentEncoding: string | undefined, body: Buffer): Buffer {
  if (contentEncoding === undefined) return body;
  let out = body;
  // Codings are listed in the order they were applied: undo them from the last.
  const codings = contentEncoding.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  for (const coding of codings.reverse()) {
    const options = { maxOutputLength: MAX_BODY_BYTES };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') out = gunzipSync(out, options);
      else if (coding === 'br') out = brotliDecompressSync(out, options);
      else if (coding === 'deflate') out = inflateDeflate(out, options);
      else throw new NotServiceAnswerError(status, contentType, `content-encoding ${coding}, which keysim cannot decode`, body);
    } catch (error) {
      if (error instanceof NotServiceAnswerError) throw error;
      throw new NotServiceAnswerError(status, contentType, `content-encoding ${coding} that does not decode: ${error instanceof Error ? error.message : String(error)}`, body);
    }
  }
  return out;
}

/** deflate is zlib-wrapped by the standard, raw by some servers: both are read. */
function inflateDeflate(body: Buffer, options: { maxOutputLength: number }): Buffer {
  try {
    return inflateSync(body, options);
  } catch {
    return inflateRawSync(body, options);
  }
}

/** Whether the (decoded) body starts like a JSON object, skipping leading white space. */
export function looksLikeJsonObject(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as number;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x7b;
  }
  return false;
}

/** The body as the service's JSON (an object); throws NotServiceAnswerError for anything else. */
export function serviceJsonOf(status: number, contentType: string | undefined, body: Buffer): unknown {
  if (!looksLikeJsonObject(body)) throw new NotServiceAnswerError(status, contentType, body.length === 0 ? 'no body' : 'not a JSON object', body);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new NotServiceAnswerError(status, contentType, `JSON that does not parse: ${error instanceof Error ? error.message : String(error)}`, body);
  }
}
