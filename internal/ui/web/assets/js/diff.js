// "What would change": the dry-run diff, one block per object, + and -
// lines marked by class and by their sign.
import {h, clear} from './dom.js';

// renderDiff shows one of a diff's states, never two: built with N
// changes, built with nothing to change, could not be built (the error
// instead of a diff), or not computable for this kind. computedAt says
// when it was computed (the page recomputes it as things change).
export function renderDiff(section, d, computedAt) {
  clear(section).append(h('h2', {id: 'diff-title'}, 'What would change'));
  section.dataset.state = d.state || 'failed';
  const when = computedAt
    ? h('p', {class: 'muted', 'data-testid': 'diff-when'}, `Computed ${computedAt.toLocaleTimeString()}${d.revision ? ` at ${d.revision}` : ''}; recomputed when the object, its source or what it applied changes.`)
    : '';
  const created = d.created || [], changed = d.changed || [], deleted = d.deleted || [];
  switch (d.state) {
  case 'notApplicable':
    section.append(h('p', {'data-testid': 'diff-not-applicable'}, d.error));
    return;
  case 'unchanged':
    section.append(h('p', {'data-testid': 'diff-none'}, `Nothing would change: the cluster matches ${d.revision || 'the source'}.`), when);
    return;
  case 'changes':
    section.append(h('p', {'data-testid': 'diff-summary'},
      `Applying ${d.revision || 'the source revision'} would create ${created.length}, change ${changed.length} and delete ${deleted.length}.`), when);
    break;
  default:
    section.append(h('p', {class: 'error', role: 'alert', 'data-testid': 'diff-error'},
      `No diff: ${d.error || 'the diff could not be computed'}`), when);
    if (!created.length && !changed.length && !deleted.length) return;
    section.append(h('p', {'data-testid': 'diff-partial'}, 'Before it failed, the comparison found:'));
  }
  const list = h('div', {class: 'diffs', 'data-testid': 'diff'});
  for (const [what, items] of [['created', created], ['changed', changed], ['deleted', deleted]]) {
    for (const item of items) list.append(block(what, item));
  }
  section.append(list);
}

function block(what, item) {
  const pre = h('pre', {class: 'diff', tabindex: 0, 'aria-label': `Diff of ${item.id}`});
  for (const line of (item.diff || '').split('\n')) {
    let cls = 'ctx';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    else if (line.startsWith('@@')) cls = 'hunk';
    pre.append(h('span', {class: `line ${cls}`}, line || ' '), '\n');
  }
  return h('details', {open: what !== 'deleted', class: `diff-item ${what}`, 'data-testid': 'diff-item', dataset: {what, id: item.id}},
    h('summary', {}, h('span', {class: `what ${what}`}, what), ' ', h('code', {}, item.id)),
    item.diff ? pre : h('p', {}, what === 'deleted' ? 'Would be pruned from the cluster.' : ''));
}
