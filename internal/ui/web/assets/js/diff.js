// "What would change": the dry-run diff, one block per object, + and -
// lines marked by class and by their sign.
import {h, clear} from './dom.js';

export function renderDiff(section, d) {
  clear(section).append(h('h2', {id: 'diff-title'}, 'What would change'));
  if (d.error) {
    section.append(h('p', {class: 'error', role: 'alert', 'data-testid': 'diff-error'}, d.error));
    if (!d.revision) return;
  }
  const created = d.created || [], changed = d.changed || [], deleted = d.deleted || [];
  section.append(h('p', {'data-testid': 'diff-summary'},
    `At ${d.revision || 'the source revision'}: ${created.length} to create, ${changed.length} to change, ${deleted.length} to delete.`));
  if (!created.length && !changed.length && !deleted.length) {
    section.append(h('p', {'data-testid': 'diff-none'}, 'Nothing would change: the cluster matches the source.'));
    return;
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
