/**
 * Reads one JSON document fed in pieces of text, handing its parts out as they complete instead
 * of building the whole value: a snapshot of a million keys is hundreds of MB of JSON, and
 * parsing it at once keeps the text, its parsed form and the restored state in memory together.
 *
 * The top levels are tokenised here: the root object, objects the sink asks to descend into,
 * and arrays it asks to read item by item. Every other value (a record, a header field) is found
 * whole in the text — its extent scanned, strings and nesting respected — and parsed with
 * JSON.parse, so each value means exactly what JSON.parse makes of it (duplicate names, escapes,
 * numbers, `__proto__`). Errors name what was wrong and a character offset in the document,
 * never an excerpt of it (the document may hold secrets).
 *
 * Pure: no I/O. Text must be fed in order; a piece may end anywhere, even inside a string or an
 * escape (the byte-to-text decoding, which must not split a character, is the caller's).
 */

/** How the value at a path is read: descended into (objects), item by item (arrays), or whole. */
export type ReadMode = 'object' | 'items' | 'whole';

export interface JsonReaderSink {
  /** How to read the value at `path` (the names leading to it from the root; [] is the root). */
  mode(path: readonly string[]): ReadMode;
  /** The start of an object or array that is read in parts (its mode was 'object' or 'items'). */
  open(path: readonly string[], kind: 'object' | 'array'): void;
  /** A value read whole; `depth` counts its levels of objects and arrays (0 for a scalar). */
  value(path: readonly string[], value: unknown, depth: number): void;
  /** An item of an array read in 'items' mode. */
  item(path: readonly string[], index: number, value: unknown, depth: number): void;
}

type Frame =
  | { kind: 'object'; path: string[]; state: 'first' | 'name' | 'colon' | 'value' | 'next'; name: string }
  | { kind: 'array'; path: string[]; state: 'first' | 'value' | 'next'; index: number };

const WS = new Uint8Array(128);
for (const c of ' \t\n\r') WS[c.charCodeAt(0)] = 1;
/** Characters that end a number, true, false or null. */
const DELIMITER = new Uint8Array(128);
for (const c of ' \t\n\r,]}') DELIMITER[c.charCodeAt(0)] = 1;

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;
const COLON = 58;

/** A value being scanned, kept across pieces so that a long value is never scanned twice. */
interface Scan {
  /** Offset in the document where the value starts. */
  startOffset: number;
  /** Its text in the pieces before the current one. */
  parts: string[];
  /** Where the scan has reached in the current piece. */
  at: number;
  depth: number;
  deepest: number;
  /** Inside a string: the scan resumes by looking for its closing quote. */
  inString: boolean;
  /** Backslashes ending the previous pieces (inside a string): they escape what follows. */
  carry: number;
  /** A number, true, false or null (ends at a delimiter instead of a bracket or quote). */
  scalar: boolean;
}

export class JsonReader {
  readonly #sink: JsonReaderSink;
  /** The current piece of text. */
  #buf = '';
  #pos = 0;
  /** Offset in the document of #buf[0]. */
  #base = 0;
  readonly #stack: Frame[] = [];
  /** The root value is complete: only whitespace may follow. */
  #done = false;
  #started = false;
  #scan: Scan | null = null;
  #problem: string | null = null;

  constructor(sink: JsonReaderSink) {
    this.#sink = sink;
  }

  /** Whether the document held no value at all (only whitespace), known after end(). */
  get empty(): boolean {
    return !this.#started;
  }

  /** Feeds the next piece of text; answers the syntax problem found so far, or undefined. */
  write(text: string): string | undefined {
    if (this.#problem !== null) return this.#problem;
    this.#base += this.#buf.length;
    this.#buf = text;
    this.#pos = 0;
    if (this.#scan !== null) this.#scan.at = 0;
    this.#run(false);
    return this.#problem ?? undefined;
  }

  /** The end of the document: answers the syntax problem (an incomplete document is one), or undefined. */
  end(): string | undefined {
    if (this.#problem === null) this.#run(true);
    if (this.#problem === null && this.#started && !this.#done) this.#problem = 'it ends before the JSON value is complete';
    return this.#problem ?? undefined;
  }

  #fail(problem: string, offset: number): void {
    this.#problem = `${problem} at character ${offset}`;
  }

  /** The next character that is not whitespace (#pos moves to it), or -1 at the end of the piece. */
  #skipWhitespace(): number {
    const buf = this.#buf;
    let i = this.#pos;
    while (i < buf.length) {
      const c = buf.charCodeAt(i);
      if (c >= 128 || WS[c] === 0) break;
      i++;
    }
    this.#pos = i;
    return i < buf.length ? buf.charCodeAt(i) : -1;
  }

  #run(final: boolean): void {
    for (;;) {
      if (this.#problem !== null) return;
      const frame = this.#stack[this.#stack.length - 1];
      if (this.#scan !== null) {
        // A value cut at the end of the last piece goes on here.
        if (!this.#continueValue(frame, final)) return;
        continue;
      }
      const c = this.#skipWhitespace();
      if (c === -1) return;
      const offset = this.#base + this.#pos;
      if (this.#done) return this.#fail('there is more after the JSON value', offset);
      if (frame === undefined) {
        this.#started = true;
        if (!this.#startValue([], final)) return;
        continue;
      }
      if (frame.kind === 'object') {
        if (frame.state === 'first' && c === CLOSE_BRACE) {
          this.#pos++;
          this.#close();
        } else if (frame.state === 'first' || frame.state === 'name') {
          if (c !== QUOTE) return this.#fail(frame.state === 'first' ? 'expected a property name or "}"' : 'expected a property name', offset);
          frame.state = 'colon';
          if (!this.#beginWhole(final)) return;
          // The name is complete: read by #finishValue.
        } else if (frame.state === 'colon') {
          if (c !== COLON) return this.#fail('expected ":" after a property name', offset);
          this.#pos++;
          frame.state = 'value';
        } else if (frame.state === 'value') {
          frame.state = 'next';
          if (!this.#startValue([...frame.path, frame.name], final)) return;
        } else {
          if (c === COMMA) frame.state = 'name';
          else if (c === CLOSE_BRACE) this.#close();
          else return this.#fail('expected "," or "}" after a property value', offset);
          this.#pos++;
        }
      } else if (frame.state === 'first' && c === CLOSE_BRACKET) {
        this.#pos++;
        this.#close();
      } else if (frame.state === 'first' || frame.state === 'value') {
        frame.state = 'next';
        if (!this.#beginWhole(final)) return;
      } else {
        if (c === COMMA) frame.state = 'value';
        else if (c === CLOSE_BRACKET) this.#close();
        else return this.#fail('expected "," or "]" after an array item', offset);
        this.#pos++;
      }
    }
  }

  #close(): void {
    this.#stack.pop();
    if (this.#stack.length === 0) this.#done = true;
  }

  /** Starts the value at `path` (at #pos): opens a frame, or reads it whole. False: more text is needed. */
  #startValue(path: string[], final: boolean): boolean {
    const c = this.#buf.charCodeAt(this.#pos);
    const mode = this.#sink.mode(path);
    if ((mode === 'object' && c === OPEN_BRACE) || (mode === 'items' && c === OPEN_BRACKET)) {
      this.#pos++;
      this.#stack.push(c === OPEN_BRACE ? { kind: 'object', path, state: 'first', name: '' } : { kind: 'array', path, state: 'first', index: 0 });
      this.#sink.open(path, c === OPEN_BRACE ? 'object' : 'array');
      return true;
    }
    if (path.length === 0) this.#done = true;
    return this.#beginWhole(final);
  }

  /** Starts scanning a value read whole at #pos; false when it goes on in the next piece (or on a problem). */
  #beginWhole(final: boolean): boolean {
    const c = this.#buf.charCodeAt(this.#pos);
    this.#scan = {
      startOffset: this.#base + this.#pos,
      parts: [],
      at: this.#pos,
      depth: 0,
      deepest: 0,
      inString: false,
      carry: 0,
      scalar: c !== OPEN_BRACE && c !== OPEN_BRACKET && c !== QUOTE,
    };
    return this.#continueValue(this.#stack[this.#stack.length - 1], final);
  }

  /** Scans on; once the value is complete, parses it and hands it where it belongs. */
  #continueValue(frame: Frame | undefined, final: boolean): boolean {
    const scan = this.#scan as Scan;
    const end = this.#scanTo(scan, final);
    if (end === -1) {
      const rest = this.#buf.slice(this.#pos);
      if (rest.length > 0) scan.parts.push(rest);
      this.#pos = this.#buf.length;
      if (final) this.#problem = 'it ends before the JSON value is complete';
      return false;
    }
    this.#scan = null;
    const piece = this.#buf.slice(this.#pos, end);
    this.#pos = end;
    const text = scan.parts.length === 0 ? piece : scan.parts.join('') + piece;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#fail(...describeParseError(error, scan.startOffset));
      return false;
    }
    if (frame === undefined) this.#sink.value([], value, scan.deepest);
    else if (frame.kind === 'array') this.#sink.item(frame.path, frame.index++, value, scan.deepest);
    else if (frame.state === 'colon') {
      if (typeof value !== 'string') {
        this.#fail('expected a property name', scan.startOffset);
        return false;
      }
      frame.name = value;
    } else this.#sink.value([...frame.path, frame.name], value, scan.deepest);
    return true;
  }

  /** Where the value being scanned ends in the current piece (exclusive), or -1 when the piece runs out first. */
  #scanTo(scan: Scan, final: boolean): number {
    const buf = this.#buf;
    let i = scan.at;
    if (scan.scalar) {
      // A number, true, false or null: up to the next delimiter (JSON.parse judges the token).
      while (i < buf.length) {
        const c = buf.charCodeAt(i);
        if (c < 128 && (DELIMITER[c] === 1 || c === QUOTE || c === OPEN_BRACE || c === OPEN_BRACKET || c === COLON)) return i;
        i++;
      }
      scan.at = i;
      return final ? i : -1;
    }
    for (;;) {
      if (scan.inString) {
        const end = this.#stringEnd(i, scan.carry);
        if (end === -1) {
          scan.carry = trailingBackslashes(buf, i, scan.carry);
          scan.at = buf.length;
          return -1;
        }
        scan.inString = false;
        scan.carry = 0;
        i = end + 1;
        if (scan.depth === 0) return i;
      }
      // On to the next character that matters: a quote or a bracket.
      while (i < buf.length) {
        const c = buf.charCodeAt(i);
        if (c === QUOTE) break;
        if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          if (++scan.depth > scan.deepest) scan.deepest = scan.depth;
        } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --scan.depth <= 0) {
          // Balanced (or not: JSON.parse then names the problem).
          return i + 1;
        }
        i++;
      }
      if (i >= buf.length) {
        scan.at = i;
        return -1;
      }
      scan.inString = true;
      i++;
    }
  }

  /**
   * The index of the quote closing a string whose text goes on at `from`, or -1 if it is not in
   * this piece. `carry`: backslashes just before `from` (at the end of earlier pieces).
   */
  #stringEnd(from: number, carry: number): number {
    const buf = this.#buf;
    let i = from;
    for (;;) {
      const quote = buf.indexOf('"', i);
      if (quote === -1) return -1;
      let backslashes = 0;
      let j = quote - 1;
      while (j >= from && buf.charCodeAt(j) === BACKSLASH) {
        backslashes++;
        j--;
      }
      if (j < from) backslashes += carry;
      if (backslashes % 2 === 0) return quote;
      i = quote + 1;
    }
  }
}

/** Backslashes at the end of `buf` (after `from`), plus `carry` when all of it is backslashes. */
function trailingBackslashes(buf: string, from: number, carry: number): number {
  let count = 0;
  let j = buf.length - 1;
  while (j >= from && buf.charCodeAt(j) === BACKSLASH) {
    count++;
    j--;
  }
  return j < from ? count + carry : count;
}

/** JSON.parse's complaint about a value starting at `start`, as [what, where] without quoting the text. */
function describeParseError(error: unknown, start: number): [string, number] {
  const message = error instanceof Error ? error.message : '';
  const located = /^([^"]*?) in JSON at position (\d+)/.exec(message);
  if (located !== null) return [located[1] ?? 'a syntax error', start + Number(located[2])];
  return ['a character that cannot stand where it is, in the value starting', start];
}
