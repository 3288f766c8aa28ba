/** Reads a request body up to a limit, without buffering more than the limit. */
import type { IncomingMessage } from 'node:http';

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

export type BodyRead = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'aborted' };

export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume();
      resolve({ ok: false, reason: 'too_large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyRead) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        // Keep draining (discarding) so the client can read the 413 instead of a reset.
        finish({ ok: false, reason: 'too_large' });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish({ ok: true, text: chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8') }));
    req.on('error', () => finish({ ok: false, reason: 'aborted' }));
    req.on('aborted', () => finish({ ok: false, reason: 'aborted' }));
  });
}

/** `application/json`, with or without parameters such as `; charset=utf-8`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const type = header.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json' || (type !== undefined && type.startsWith('application/') && type.endsWith('+json'));
}
