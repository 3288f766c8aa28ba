/**
 * The words shared by every rendering of the resources section (summary, Markdown, HTML): the
 * target's kind, one line per kind of resource, and the verdict on what was left.
 */
import type { ResourceCount, ResourcesSection, RunReport } from './model.js';

/** `simulator` (the embedded one), `simulator (remote)` or `live`. */
export function targetLabel(target: RunReport['target']): string {
  if (target.kind === 'live') return 'live';
  return target.remote === true ? 'simulator (remote)' : 'simulator';
}

const KIND_LABEL: Record<ResourceCount['kind'], string> = {
  apis: 'APIs',
  keys: 'keys',
  identities: 'identities',
  overrides: 'overrides',
  namespaces: 'namespaces',
};

export function kindLabel(kind: ResourceCount['kind']): string {
  return KIND_LABEL[kind];
}

/** Why what is left of a kind was left on purpose, or '' when it should not have been. */
export function leftReason(section: ResourcesSection, count: ResourceCount): string {
  if (count.left === 0) return '';
  if (section.disposal === 'kept') return 'kept (--keep)';
  if (section.disposal === 'discarded') return 'discarded with the embedded simulator';
  if (count.kind === 'apis') return 'no delete operation: they stay, empty';
  return count.left > count.leftExpected ? 'should have been deleted' : '';
}

/** One sentence: what the run left, and what to do about it. */
export function resourcesVerdict(section: ResourcesSection): string {
  const created = section.kinds.reduce((sum, k) => sum + k.created, 0);
  if (created === 0) return 'The run created nothing on its target.';
  const command = section.cleanupCommand === undefined ? '' : ` Delete them with: ${section.cleanupCommand}`;
  if (section.unexpectedlyLeft > 0) return `${section.unexpectedlyLeft} resources were left on the target that should have been deleted.${command}`;
  if (section.disposal === 'kept') {
    const left = section.kinds.reduce((sum, k) => sum + k.left, 0);
    return `What the run had not deleted was kept (--keep): ${left} resources.${command}`;
  }
  if (section.disposal === 'discarded') return 'The embedded simulator was discarded with the run: nothing needed deleting.';
  const apis = section.kinds.find((k) => k.kind === 'apis')?.left ?? 0;
  return `Everything the run created was deleted${apis > 0 ? `, but for ${apis} empty APIs (the service has no operation to delete one)` : ''}.`;
}

/** `keys 3 created, 3 deleted, 0 left` for each kind. */
export function resourceCountText(count: ResourceCount): string {
  return `${kindLabel(count.kind)} ${count.created} created, ${count.deleted} deleted, ${count.left} left`;
}
