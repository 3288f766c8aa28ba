/**
 * The permission query of keys.verifyKey (docs/service-model.md#permission-queries): permission names joined with AND
 * and OR, with parentheses; AND binds tighter than OR; `*` is an ordinary character of a name.
 *
 *   query  := or
 *   or     := and ("OR" and)*
 *   and    := atom ("AND" atom)*
 *   atom   := NAME | "(" or ")"
 *
 * The operators are case-insensitive, as in the production service: `a and b` is `a AND b`, so
 * a permission cannot be named "and" or "or" in any case.
 */
import { type Result, invalid, ok } from './errors.js';

export type PermissionQuery = { kind: 'name'; name: string } | { kind: 'and' | 'or'; parts: PermissionQuery[] };

const TOKEN = /\s*(\(|\)|[^\s()]+)/y;

function tokenize(text: string): string[] | undefined {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    TOKEN.lastIndex = at;
    const match = TOKEN.exec(text);
    if (match === null) return undefined;
    tokens.push(match[1] ?? '');
    at = TOKEN.lastIndex;
  }
  return tokens;
}

/** "AND" or "OR" (in any case), else undefined: the operator a token stands for. */
function operatorOf(token: string | undefined): 'AND' | 'OR' | undefined {
  const upper = token?.toUpperCase();
  return upper === 'AND' || upper === 'OR' ? upper : undefined;
}

/** Parses a permission query; a syntax error is a 400 naming the problem. */
export function parsePermissionQuery(text: string): Result<PermissionQuery> {
  const tokens = tokenize(text) ?? [];
  let pos = 0;
  const problem = (message: string) =>
    invalid('body.permissions', `The permission query is not valid: ${message}.`, 'Write names joined with AND / OR, e.g. "a.read AND (b.write OR c.write)".');

  /** Parts joined by one operator (`a OR b OR c`); a single part is itself. */
  function parseChain(operator: 'AND' | 'OR', parsePart: () => PermissionQuery | string): PermissionQuery | string {
    const parts: PermissionQuery[] = [];
    for (;;) {
      const part = parsePart();
      if (typeof part === 'string') return part;
      parts.push(part);
      if (operatorOf(tokens[pos]) !== operator) break;
      pos++;
    }
    return parts.length === 1 ? (parts[0] as PermissionQuery) : { kind: operator === 'OR' ? 'or' : 'and', parts };
  }
  // AND binds tighter than OR: an OR chain is made of AND chains.
  function parseOr(): PermissionQuery | string {
    return parseChain('OR', parseAnd);
  }
  function parseAnd(): PermissionQuery | string {
    return parseChain('AND', parseAtom);
  }
  function parseAtom(): PermissionQuery | string {
    const token = tokens[pos];
    if (token === undefined) return 'it ends where a permission name was expected';
    // Errors name the position, never the client's text.
    const operator = operatorOf(token);
    if (operator !== undefined) return `the operator ${operator} (token ${pos + 1}) stands where a permission name was expected`;
    if (token === ')') return `a ")" (token ${pos + 1}) has no matching "("`;
    pos++;
    if (token !== '(') return { kind: 'name', name: token };
    const inner = parseOr();
    if (typeof inner === 'string') return inner;
    if (tokens[pos] !== ')') return 'a "(" is not closed';
    pos++;
    return inner;
  }

  if (tokens.length === 0) return problem('it is empty');
  const query = parseOr();
  if (typeof query === 'string') return problem(query);
  if (pos < tokens.length) return problem(`token ${pos + 1} of ${tokens.length} is unexpected after a complete query (join names with AND or OR)`);
  return ok(query);
}

/** Whether a key holding `held` satisfies the query. */
export function satisfiesPermissionQuery(query: PermissionQuery, held: ReadonlySet<string> | readonly string[]): boolean {
  switch (query.kind) {
    case 'name':
      return 'has' in held ? held.has(query.name) : held.includes(query.name);
    case 'and':
      return query.parts.every((part) => satisfiesPermissionQuery(part, held));
    case 'or':
      return query.parts.some((part) => satisfiesPermissionQuery(part, held));
  }
}
