/** The one table from error code to HTTP status and title (docs/errors.md#catalogue). */
import type { ErrorCode } from '../engine/index.js';

export const PROBLEMS: Record<ErrorCode, { status: number; title: string }> = {
  'err:service:application:invalid_input': { status: 400, title: 'Bad Request' },
  'err:service:authentication:missing': { status: 400, title: 'Bad Request' },
  'err:service:authentication:malformed': { status: 400, title: 'Bad Request' },
  'err:service:authentication:key_not_found': { status: 401, title: 'Unauthorized' },
  'err:service:authorization:insufficient_permissions': { status: 403, title: 'Insufficient Permissions' },
  'err:service:data:key_not_found': { status: 404, title: 'Not Found' },
  'err:service:data:api_not_found': { status: 404, title: 'Not Found' },
  'err:service:data:identity_not_found': { status: 404, title: 'Not Found' },
  'err:service:data:ratelimit_namespace_not_found': { status: 404, title: 'Not Found' },
  'err:service:data:ratelimit_override_not_found': { status: 404, title: 'Not Found' },
  'err:service:data:workspace_not_found': { status: 404, title: 'Not Found' },
  'err:service:data:identity_already_exists': { status: 409, title: 'Conflicting Resource' },
  'err:service:data:ratelimit_namespace_gone': { status: 410, title: 'Resource Gone' },
  'err:service:application:precondition_failed': { status: 412, title: 'Precondition Failed' },
  'err:service:bad_request:request_body_too_large': { status: 413, title: 'Request Entity Too Large' },
  'err:service:application:unexpected_error': { status: 500, title: 'Internal Server Error' },
};

/** Default base of the `type` URL; `type` = `<errorsUrl>/service/<category>/<name>`. */
export const DEFAULT_ERRORS_URL = 'https://unkey.com/docs/errors';

/** `err:service:data:key_not_found` → `<errorsUrl>/service/data/key_not_found`. */
export function errorTypeUrl(identifier: string, errorsUrl: string): string {
  return `${errorsUrl}/${identifier.slice('err:'.length).replaceAll(':', '/')}`;
}

/** Version 1 answers with a short upper-case code instead of the envelope. */
export function v1ErrorCode(status: number): string {
  switch (status) {
    case 400:
      return 'BAD_REQUEST';
    case 401:
      return 'UNAUTHORIZED';
    case 403:
      return 'FORBIDDEN';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'METHOD_NOT_ALLOWED';
    case 409:
      return 'CONFLICT';
    case 410:
      return 'GONE';
    case 412:
      return 'PRECONDITION_FAILED';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 429:
      return 'TOO_MANY_REQUESTS';
    case 503:
      return 'SERVICE_UNAVAILABLE';
    default:
      return 'INTERNAL_SERVER_ERROR';
  }
}
