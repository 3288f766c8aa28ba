/**
 * `JSON.stringify` of a `keys.verifyKey` answer, written without the generic serialiser: after the
 * socket write and parsing, serialising the answer object was the largest single step of the
 * route (docs/benchmarks.md#http-simulator). The engine sets the fields in the order written
 * here (verify.ts: `valid`, `code`, then the key's fields, then `ratelimits`), so the text is the
 * one JSON.stringify writes; a property test over real engine answers holds the two together.
 *
 * Free-form values (a name, meta, permission and role names, the identity) go through
 * JSON.stringify itself, so escaping is JSON's own; a number that is not finite (never in an
 * answer) sends the whole answer back to JSON.stringify, which writes it as null.
 */
import type { VerifyKeyOutput, VerifyRateLimitView } from '../../engine/index.js';

function finite(n: number | undefined): boolean {
  return n === undefined || Number.isFinite(n);
}

/** Every number of the answer is finite: `${n}` is then exactly what JSON writes for it. */
function numbersFinite(out: VerifyKeyOutput): boolean {
  if (!finite(out.expires) || !finite(out.credits)) return false;
  const limits = out.ratelimits;
  if (limits !== undefined) {
    for (const r of limits) {
      if (!(Number.isFinite(r.limit) && Number.isFinite(r.duration) && Number.isFinite(r.reset) && Number.isFinite(r.remaining))) return false;
    }
  }
  return true;
}

function rateLimitText(r: VerifyRateLimitView): string {
  return `{"id":${JSON.stringify(r.id)},"name":${JSON.stringify(r.name)},"limit":${r.limit},"duration":${r.duration},"reset":${r.reset},"remaining":${r.remaining},"exceeded":${r.exceeded},"autoApply":${r.autoApply}}`;
}

export function verifyKeyOutputText(out: VerifyKeyOutput): string {
  if (!numbersFinite(out)) return JSON.stringify(out);
  // The code is one of VERIFICATION_CODES: capitals and "_", nothing to escape.
  let text = `{"valid":${out.valid},"code":"${out.code}"`;
  if (out.keyId !== undefined) text += `,"keyId":${JSON.stringify(out.keyId)}`;
  if (out.enabled !== undefined) text += `,"enabled":${out.enabled}`;
  if (out.name !== undefined) text += `,"name":${JSON.stringify(out.name)}`;
  if (out.meta !== undefined) text += `,"meta":${JSON.stringify(out.meta)}`;
  if (out.expires !== undefined) text += `,"expires":${out.expires}`;
  if (out.credits !== undefined) text += `,"credits":${out.credits}`;
  if (out.permissions !== undefined) text += `,"permissions":${JSON.stringify(out.permissions)}`;
  if (out.roles !== undefined) text += `,"roles":${JSON.stringify(out.roles)}`;
  if (out.identity !== undefined) text += `,"identity":${JSON.stringify(out.identity)}`;
  const limits = out.ratelimits;
  if (limits !== undefined) {
    text += ',"ratelimits":[';
    for (let i = 0; i < limits.length; i++)
      text += i === 0 ? rateLimitText(limits[i] as VerifyRateLimitView) : `,${rateLimitText(limits[i] as VerifyRateLimitView)}`;
    text += ']';
  }
  return `${text}}`;
}
