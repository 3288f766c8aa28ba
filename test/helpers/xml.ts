/**
 * A small strict XML 1.0 reader for the tests of keysim's XML outputs (JUnit): it refuses what a
 * CI system's parser would refuse — mismatched or unclosed tags, a raw `<` or `&` in text or an
 * attribute, an unknown entity, a duplicate attribute, a character XML cannot carry, anything
 * after the root — and gives back the element tree with decoded text and attributes.
 */

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.:-]*/;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
// eslint-disable-next-line no-misleading-character-class -- unpaired surrogates are the target, without the u flag
const BAD_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\uD800-\uDBFF\uDC00-\uDFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function decode(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`raw "<" in ${where}`);
  return raw.replace(/&([^;]*);|&/g, (whole, name: string | undefined) => {
    if (name === undefined) throw new Error(`raw "&" in ${where}`);
    if (name in ENTITIES) return ENTITIES[name] as string;
    const num = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(name);
    if (num === null) throw new Error(`unknown entity &${name}; in ${where}`);
    return String.fromCodePoint(num[1] !== undefined ? parseInt(num[1], 16) : Number(num[2]));
  });
}

/** Parses `text` as a whole XML document; throws naming the first thing that is not well-formed. */
export function parseXml(text: string): XmlElement {
  const bad = BAD_CHAR.exec(text);
  if (bad !== null) throw new Error(`a character XML 1.0 cannot carry (U+${(bad[0].codePointAt(0) ?? 0).toString(16)}) at ${bad.index}`);
  let i = 0;
  const rest = () => text.slice(i);
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  if (rest().startsWith('<?xml')) {
    const end = text.indexOf('?>', i);
    if (end === -1) throw new Error('unterminated XML declaration');
    i = end + 2;
  }
  skipSpace();
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (i < text.length) {
    if (stack.length === 0 && root !== undefined) {
      skipSpace();
      if (i < text.length) throw new Error(`content after the root element at ${i}`);
      break;
    }
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i);
      if (end === -1) throw new Error('unterminated comment');
      i = end + 3;
    } else if (text.startsWith('</', i)) {
      i += 2;
      const name = NAME.exec(rest())?.[0];
      if (name === undefined) throw new Error(`bad closing tag at ${i}`);
      i += name.length;
      skipSpace();
      if (text[i] !== '>') throw new Error(`bad closing tag </${name} at ${i}`);
      i++;
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`);
    } else if (text[i] === '<') {
      i++;
      const name = NAME.exec(rest())?.[0];
      if (name === undefined) throw new Error(`bad tag at ${i}`);
      i += name.length;
      const element: XmlElement = { name, attributes: {}, children: [], text: '' };
      for (;;) {
        const before = i;
        skipSpace();
        if (text.startsWith('/>', i) || text[i] === '>') break;
        if (i === before) throw new Error(`no space before an attribute of <${name}> at ${i}`);
        const attr = NAME.exec(rest())?.[0];
        if (attr === undefined) throw new Error(`bad attribute in <${name}> at ${i}`);
        i += attr.length;
        skipSpace();
        if (text[i] !== '=') throw new Error(`attribute ${attr} of <${name}> has no value`);
        i++;
        skipSpace();
        const quote = text[i];
        if (quote !== '"' && quote !== "'") throw new Error(`attribute ${attr} of <${name}> is not quoted`);
        const end = text.indexOf(quote, i + 1);
        if (end === -1) throw new Error(`unterminated attribute ${attr} of <${name}>`);
        if (attr in element.attributes) throw new Error(`duplicate attribute ${attr} in <${name}>`);
        element.attributes[attr] = decode(text.slice(i + 1, end), `attribute ${attr} of <${name}>`);
        i = end + 1;
      }
      const parent = stack[stack.length - 1];
      if (parent === undefined) {
        if (root !== undefined) throw new Error('two root elements');
        root = element;
      } else {
        parent.children.push(element);
      }
      if (text.startsWith('/>', i)) {
        i += 2;
      } else {
        i++;
        stack.push(element);
      }
    } else {
      const end = text.indexOf('<', i);
      const raw = text.slice(i, end === -1 ? text.length : end);
      const parent = stack[stack.length - 1];
      if (parent === undefined) throw new Error(`text outside the root element at ${i}`);
      parent.text += decode(raw, `the text of <${parent.name}>`);
      i = end === -1 ? text.length : end;
    }
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1]?.name ?? ''}> is never closed`);
  if (root === undefined) throw new Error('no root element');
  return root;
}

/** Every element named `name` under `element` (depth first). */
export function findAll(element: XmlElement, name: string): XmlElement[] {
  const found: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    if (e.name === name) found.push(e);
    e.children.forEach(walk);
  };
  walk(element);
  return found;
}
