/**
 * The layer rules of docs/architecture.md, judged on import edges (test/helpers/import-graph.ts):
 * which folder may import which, and the import cycles among src files (the rooms of src/load and
 * the scenarios' imports are test/helpers/room-rules.ts).
 */
import type { ImportEdge } from './import-graph.js';

export interface LayerViolation {
  readonly rule: string;
  readonly edge: ImportEdge;
}

const isBuiltin = (specifier: string) => specifier.startsWith('node:');
const isPackage = (edge: ImportEdge) => edge.to === undefined && !isBuiltin(edge.specifier);
const inFolder = (path: string | undefined, folder: string) => path !== undefined && path.startsWith(folder);

interface Rule {
  readonly name: string;
  /** The files the rule is about. */
  readonly folder: string;
  /** True when the edge breaks the rule. */
  readonly breaks: (edge: ImportEdge) => boolean;
}

/** One rule per layer boundary; the name is what a failure prints, so it says what is allowed. */
export const LAYER_RULES: readonly Rule[] = [
  {
    name: 'src/engine imports only src/engine and node: builtins (the engine is pure and stands alone)',
    folder: 'src/engine/',
    breaks: (edge) => !isBuiltin(edge.specifier) && !inFolder(edge.to, 'src/engine/'),
  },
  {
    name: 'src/report imports only src/report, packages, and `import type` from src/engine (renderers are pure: no node: builtins)',
    folder: 'src/report/',
    breaks: (edge) => !inFolder(edge.to, 'src/report/') && !isPackage(edge) && !(edge.typeOnly && inFolder(edge.to, 'src/engine/')),
  },
  {
    name: 'src/http never imports src/load or src/cli',
    folder: 'src/http/',
    breaks: (edge) => inFolder(edge.to, 'src/load/') || inFolder(edge.to, 'src/cli/'),
  },
  {
    name: 'src/load never imports src/cli',
    folder: 'src/load/',
    breaks: (edge) => inFolder(edge.to, 'src/cli/'),
  },
];

/** Every edge that breaks a layer rule. */
export function layerViolations(edges: readonly ImportEdge[]): LayerViolation[] {
  return LAYER_RULES.flatMap((rule) =>
    edges.filter((edge) => edge.from.startsWith(rule.folder) && rule.breaks(edge)).map((edge) => ({ rule: rule.name, edge })),
  );
}

/** A violation as one line: where, what, and the rule it breaks. */
export function describeViolation({ rule, edge }: LayerViolation): string {
  return `${edge.from}:${edge.line} imports '${edge.specifier}'${edge.typeOnly ? ' (type only)' : ''}: ${rule}`;
}

/**
 * The import cycles among the files `within` accepts: one cycle (a path that starts and ends on
 * the same file) per strongly connected component of more than one file, or a file importing
 * itself. Type-only imports count: a cycle of them is still two modules that cannot be understood
 * one without the other.
 */
export function importCycles(edges: readonly ImportEdge[], within: (path: string) => boolean): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.to === undefined || !within(edge.from) || !within(edge.to)) continue;
    const list = next.get(edge.from) ?? [];
    if (!list.includes(edge.to)) list.push(edge.to);
    next.set(edge.from, list);
  }
  return stronglyConnected(next)
    .filter((component) => component.length > 1 || (next.get(component[0] as string) ?? []).includes(component[0] as string))
    .map((component) => cycleThrough(component, next));
}

/** Tarjan's strongly connected components, iteratively (no recursion depth limit on long chains). */
function stronglyConnected(next: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  for (const root of [...next.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; child: number }[] = [{ node: root, child: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; child: number };
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++] as string;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(child) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components;
}

/** A shortest cycle from the component's first file back to it, staying inside the component. */
function cycleThrough(component: readonly string[], next: ReadonlyMap<string, readonly string[]>): string[] {
  const start = component[0] as string;
  const members = new Set(component);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string;
    for (const child of next.get(node) ?? []) {
      if (!members.has(child)) continue;
      if (child === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) path.unshift(at);
        return [start, ...path];
      }
      if (!cameFrom.has(child)) {
        cameFrom.set(child, node);
        queue.push(child);
      }
    }
  }
  return [...component, start];
}
