/**
 * The words of the per-response checks' verdict, one source for a run and a merge of segments: a
 * request that got no answer neither passed nor failed its check, so it is counted apart rather
 * than among the answers that passed.
 */

/** `all 800 answers passed`, or `446 answers passed; 354 requests got no answer (unknown)`. */
export function answersPassedText(total: number, unanswered: number): string {
  if (unanswered <= 0) return `all ${total} answers passed`;
  return `${total - unanswered} answers passed; ${unanswered} ${unanswered === 1 ? 'request' : 'requests'} got no answer (unknown)`;
}
