/** The `Authorization` header of the service's calls: `Bearer <root key>`. */
import { type Problem, fromEngine } from './envelope.js';

/** Parses `Authorization`: absent → undefined; `Bearer <token>` → the token; anything else → a problem. */
export function bearer(header: string | undefined): { ok: true; token: string | undefined } | { ok: false; problem: Problem } {
  if (header === undefined) return { ok: true, token: undefined };
  const token = plainBearerToken(header);
  if (token !== undefined) return { ok: true, token };
  // The scheme is case-insensitive (RFC 9110 §11.1).
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (match === null) {
    return {
      ok: false,
      problem: fromEngine({
        code: 'err:service:authentication:malformed',
        detail: 'The Authorization header must be "Bearer <ROOT_KEY>".',
      }),
    };
  }
  return { ok: true, token: match[1] };
}

/**
 * The token of the header clients send (`Bearer ` then printable ASCII without spaces), found
 * without the pattern; undefined: let the pattern decide (other spellings, spaces, other characters).
 */
function plainBearerToken(header: string): string | undefined {
  if (header.length <= 7 || !header.startsWith('Bearer ')) return undefined;
  for (let i = 7; i < header.length; i++) {
    const code = header.charCodeAt(i);
    if (code <= 0x20 || code >= 0x7f) return undefined;
  }
  return header.slice(7);
}
