/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4) for the `--metrics`
 * tests: every line must be a `# HELP`, a `# TYPE`, a comment or a sample with valid metric and
 * label names, properly escaped label values and a float value; a family's TYPE comes before its
 * samples and once, its samples are not interleaved with another family's, a histogram's samples
 * are `_bucket` (with `le`), `_sum` and `_count`. Throws naming the first offending line.
 */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Record<string, string>;
  help: Record<string, string>;
  samples: PromSample[];
}

const METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) throw new Error(`not a float value "${text}" in: ${line}`);
  return Number(text);
}

/** The family a sample name belongs to, given the declared types (histogram suffixes stripped). */
function familyOf(name: string, types: Record<string, string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
    if (base !== undefined && (types[base] === 'histogram' || types[base] === 'summary')) return base;
  }
  return name;
}

export function parseExposition(text: string): Exposition {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const out: Exposition = { types: {}, help: {}, samples: [] };
  const seenFamilies: string[] = [];
  for (const line of text.split('\n').slice(0, -1)) {
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([^ ]+) (.*)$/.exec(line);
      if (m === null) continue; // a plain comment
      const [, kind, name = '', rest = ''] = m;
      if (METRIC.exec(name)?.[0] !== name) throw new Error(`bad metric name in: ${line}`);
      if (kind === 'TYPE') {
        if (name in out.types) throw new Error(`second TYPE for ${name}`);
        if (!TYPES.has(rest)) throw new Error(`unknown type in: ${line}`);
        if (out.samples.some((s) => familyOf(s.name, { [name]: rest }) === name)) throw new Error(`TYPE after samples of ${name}`);
        out.types[name] = rest;
      } else {
        if (name in out.help) throw new Error(`second HELP for ${name}`);
        if (/\\(?![\\n])/.test(rest)) throw new Error(`bad escape in HELP: ${line}`);
        out.help[name] = rest;
      }
      continue;
    }
    if (line.trim() === '') throw new Error('an empty line in the exposition');
    let i: number;
    const name = METRIC.exec(line)?.[0];
    if (name === undefined) throw new Error(`bad metric name in: ${line}`);
    i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const label = LABEL.exec(line.slice(i))?.[0];
        if (label === undefined) throw new Error(`bad label name in: ${line}`);
        i += label.length;
        if (line.slice(i, i + 2) !== '="') throw new Error(`label ${label} has no quoted value in: ${line}`);
        i += 2;
        let value = '';
        for (;;) {
          const ch = line[i];
          if (ch === undefined) throw new Error(`unterminated label value in: ${line}`);
          if (ch === '"') break;
          if (ch === '\\') {
            const next = line[i + 1];
            if (next === '\\' || next === '"') value += next;
            else if (next === 'n') value += '\n';
            else throw new Error(`bad escape in a label value: ${line}`);
            i += 2;
          } else {
            value += ch;
            i++;
          }
        }
        i++;
        if (label in labels) throw new Error(`duplicate label ${label} in: ${line}`);
        labels[label] = value;
        if (line[i] === ',') i++;
        else if (line[i] !== '}') throw new Error(`expected , or } in: ${line}`);
      }
      i++;
    }
    if (line[i] !== ' ') throw new Error(`no space before the value in: ${line}`);
    const parts = line.slice(i + 1).split(' ');
    if (parts.length > 2 || (parts.length === 2 && !/^-?\d+$/.test(parts[1] ?? ''))) throw new Error(`bad value or timestamp in: ${line}`);
    const value = parseValue(parts[0] ?? '', line);
    const family = familyOf(name, out.types);
    const type = out.types[family];
    if (type === 'histogram') {
      if (name === family) throw new Error(`a histogram sample must be _bucket, _sum or _count: ${line}`);
      if (name.endsWith('_bucket') && labels.le === undefined) throw new Error(`a bucket without le: ${line}`);
    }
    if (type === 'counter' && !(value >= 0)) throw new Error(`a counter below 0: ${line}`);
    const last = seenFamilies[seenFamilies.length - 1];
    if (last !== family) {
      if (seenFamilies.includes(family)) throw new Error(`samples of ${family} interleaved with another family's`);
      seenFamilies.push(family);
    }
    out.samples.push({ name, labels, value });
  }
  return out;
}
