/**
 * The closed list of error codes (docs/errors.md#catalogue). Engine operations return these as values;
 * the HTTP layer maps each code to its status and title in one table. A refused verification is
 * not an error: it is a normal result with a code such as USAGE_EXCEEDED.
 */
export const ERROR_CODES = [
  'err:service:application:invalid_input',
  'err:service:authentication:missing',
  'err:service:authentication:malformed',
  'err:service:authentication:key_not_found',
  'err:service:authorization:insufficient_permissions',
  'err:service:data:key_not_found',
  'err:service:data:api_not_found',
  'err:service:data:identity_not_found',
  'err:service:data:ratelimit_namespace_not_found',
  'err:service:data:ratelimit_override_not_found',
  'err:service:data:workspace_not_found',
  'err:service:data:identity_already_exists',
  'err:service:data:ratelimit_namespace_gone',
  'err:service:application:precondition_failed',
  'err:service:bad_request:request_body_too_large',
  'err:service:application:unexpected_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** One violated rule of a request, with the field it is about (`body.credits.refill.refillDay`). */
export interface FieldError {
  location: string;
  message: string;
  fix?: string;
}

export interface EngineError {
  code: ErrorCode;
  /** A sentence for a person: what was wrong and, where it helps, how to fix it. */
  detail: string;
  /** Field-level violations; present on invalid_input. */
  errors?: FieldError[];
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: EngineError };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function fail(code: ErrorCode, detail: string, errors?: FieldError[]): { ok: false; error: EngineError } {
  return { ok: false, error: errors === undefined ? { code, detail } : { code, detail, errors } };
}

/** An invalid_input error about one field. */
export function invalid(location: string, message: string, fix?: string): { ok: false; error: EngineError } {
  const error: FieldError = fix === undefined ? { location, message } : { location, message, fix };
  return fail('err:service:application:invalid_input', message, [error]);
}
