/**
 * The rooms of src/load (docs/architecture.md#the-rooms-of-srcload), judged on import edges
 * (test/helpers/import-graph.ts): every file of src/load lives in a room; another layer enters a
 * room only by its door (index.ts) or by the layer's door (src/load/index.ts); a room's files
 * import their siblings directly, never their own door; a room imports another only by its door,
 * and only a room its row of the table allows; the allowed imports form no cycle.
 */
import type { ImportEdge } from './import-graph.js';

/** Which rooms each room may import (by their doors). Read it as "run may import every other room". */
export type RoomTable = Readonly<Record<string, readonly string[]>>;

const LOAD = 'src/load/';
const LAYER_DOOR = 'src/load/index.ts';

/** The room a src/load path belongs to (`src/load/run/runner.ts` → `run`); undefined outside rooms. */
export function roomOf(path: string | undefined): string | undefined {
  return path === undefined ? undefined : /^src\/load\/([^/]+)\/./.exec(path)?.[1];
}

const doorOf = (room: string) => `${LOAD}${room}/index.ts`;
const isDoor = (path: string | undefined) => path === LAYER_DOOR || (roomOf(path) !== undefined && path === doorOf(roomOf(path) as string));
const where = (edge: ImportEdge) => `${edge.from}:${edge.line} imports '${edge.specifier}'`;

/** Every import (and every file) that breaks a rule of the rooms, one line each. */
export function roomViolations(files: Iterable<string>, edges: readonly ImportEdge[], table: RoomTable): string[] {
  const problems: string[] = [];
  for (const file of files) {
    if (file.startsWith(LOAD) && file !== LAYER_DOOR && roomOf(file) === undefined) {
      problems.push(`${file} lies in src/load outside any room: move it into the room of its concept (and list it in the rooms map)`);
    }
  }
  for (const edge of edges) {
    if (edge.to === undefined || !edge.to.startsWith(LOAD) || !edge.from.startsWith('src/')) continue;
    const from = roomOf(edge.from);
    const to = roomOf(edge.to);
    if (!edge.from.startsWith(LOAD)) {
      if (!isDoor(edge.to)) problems.push(`${where(edge)}: from outside src/load, import a room's door (src/load/<room>/index.ts) or src/load/index.ts`);
      continue;
    }
    if (edge.from === LAYER_DOOR || from === undefined) continue;
    if (edge.to === LAYER_DOOR) {
      problems.push(`${where(edge)}: a room never imports the layer's door (it re-exports this room too); import the room's door`);
    } else if (to === from) {
      if (edge.to === doorOf(from) && edge.from !== edge.to)
        problems.push(`${where(edge)}: a room's files import their siblings directly, never their own door`);
    } else if (to !== undefined) {
      if (edge.to !== doorOf(to)) problems.push(`${where(edge)}: another room is entered by its door, src/load/${to}/index.ts`);
      if (!(table[from] ?? []).includes(to)) {
        problems.push(
          `${where(edge)}: room ${from} may import only ${(table[from] ?? []).join(', ') || 'no other room'} (the table of rooms in test/architecture.test.ts)`,
        );
      }
    }
  }
  return problems;
}

/** The room-to-room edges the imports make: one per pair, as edges between the rooms' doors. */
export function doorEdges(edges: readonly ImportEdge[]): ImportEdge[] {
  const pairs = new Map<string, ImportEdge>();
  for (const edge of edges) {
    const from = roomOf(edge.from);
    const to = roomOf(edge.to);
    if (from === undefined || to === undefined || from === to) continue;
    const key = `${from}→${to}`;
    if (!pairs.has(key)) pairs.set(key, { ...edge, from: doorOf(from), to: doorOf(to) });
  }
  return [...pairs.values()];
}

/** The table's own edges (room → a room it may import), to find a cycle in the table itself. */
export function tableEdges(table: RoomTable): ImportEdge[] {
  return Object.entries(table).flatMap(([from, allowed]) =>
    allowed.map((to) => ({ from: doorOf(from), to: doorOf(to), specifier: `../${to}/index.js`, typeOnly: false, line: 0 })),
  );
}

/** Scenario imports other than keysim's public API (src/index.ts), node: builtins, packages and other scenario files. */
export function scenarioImportProblems(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((edge) => edge.from.startsWith('scenarios/') && edge.to !== undefined && edge.to !== 'src/index.ts' && !edge.to.startsWith('scenarios/'))
    .map((edge) => `${where(edge)}: a scenario imports keysim's public API (src/index.ts, \`keysim\` for a user's scenario); export what it needs from there`);
}
