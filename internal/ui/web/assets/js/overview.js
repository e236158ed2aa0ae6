// The overview: what needs attention, counts per kind and state, what is
// suspended, and every object in a filterable table with bulk actions.
import {get, query} from './api.js';
import {h, badge, clear, debounce, nextRun, nextRunLabel, objectLink, refId, shortRevision, states, stateInfo, time} from './dom.js';
import {filterBar, readFilters, renderHidden} from './filters.js';
import {on} from './live.js';
import {actionLabels, run} from './actions.js';

export async function overview(main, _params, params) {
  let filters = readFilters(params);
  const selected = new Set();
  const rows = new Map(); // id → row element
  const sections = {
    hidden: h('div', {'data-testid': 'hidden-kinds', hidden: true}),
    attention: h('section', {'aria-labelledby': 'attention-title', 'data-testid': 'attention-section'}),
    counts: h('section', {'aria-labelledby': 'counts-title'}),
    suspended: h('section', {'aria-labelledby': 'suspended-title'}),
  };
  const status = h('p', {id: 'bulk-status', class: 'action-status', role: 'status', 'data-testid': 'bulk-status'});
  const tbody = h('tbody', {id: 'objects-body'});
  const countText = h('span', {id: 'selection-count', 'data-testid': 'selection-count'}, 'none selected');
  const selectAll = h('input', {type: 'checkbox', id: 'select-all', 'aria-label': 'Select every object shown'});
  const bulkButtons = Object.keys(actionLabels).map((a) =>
    h('button', {type: 'button', id: `bulk-${a}`, 'data-testid': `bulk-${a}`, disabled: true, dataset: {action: a}},
      actionLabels[a]));
  let data = null;

  const syncSelection = () => {
    for (const b of bulkButtons) b.disabled = selected.size === 0;
    countText.textContent = selected.size ? `${selected.size} selected` : 'none selected';
    const shown = [...rows.keys()];
    selectAll.checked = shown.length > 0 && shown.every((id) => selected.has(id));
    selectAll.indeterminate = !selectAll.checked && shown.some((id) => selected.has(id));
  };
  selectAll.addEventListener('change', () => {
    for (const [id, row] of rows) {
      row.querySelector('input[type=checkbox]').checked = selectAll.checked;
      if (selectAll.checked) selected.add(id);
      else selected.delete(id);
    }
    syncSelection();
  });
  for (const b of bulkButtons) {
    b.addEventListener('click', async () => {
      const targets = [...selected].map((id) => data.objects.find((o) => refId(o) === id)).filter(Boolean)
        .map((o) => ({kind: o.kind, namespace: o.namespace, name: o.name}));
      await run(b.dataset.action, targets, status);
    });
  }

  const row = (o) => {
    const id = refId(o);
    const box = h('input', {type: 'checkbox', 'aria-label': `Select ${id}`, checked: selected.has(id)});
    box.addEventListener('change', () => {
      if (box.checked) selected.add(id);
      else selected.delete(id);
      syncSelection();
    });
    const tr = h('tr', {'data-testid': 'object-row', dataset: {id}}, h('td', {}, box));
    fillRow(tr, o);
    return tr;
  };

  // sort is the column the table is sorted by (null: the server's order,
  // what needs attention first) and its direction.
  const sort = {col: null, dir: 1};
  const headers = columns.map((col, i) => {
    const button = h('button', {type: 'button', class: 'sort', 'data-testid': `sort-${col}`}, columnTitles[i]);
    const th = h('th', {scope: 'col', 'aria-sort': 'none'}, button);
    button.addEventListener('click', () => {
      sort.dir = sort.col === col ? -sort.dir : 1;
      sort.col = col;
      for (const other of headers) other.setAttribute('aria-sort', 'none');
      th.setAttribute('aria-sort', sort.dir > 0 ? 'ascending' : 'descending');
      renderTable();
    });
    return th;
  });
  const sorted = () => {
    if (!sort.col) return data.objects;
    const key = (o) => {
      if (sort.col === 'reason') return `${o.reason || ''} ${o.message || ''}`;
      if (sort.col === 'next') {
        const n = nextRun(o);
        return n.at ? String(n.at.getTime()) : o.suspended ? '~suspended' : '~~';
      }
      return String(o[sort.col] || '');
    };
    return [...data.objects].sort((a, b) => sort.dir * key(a).localeCompare(key(b), undefined, {numeric: true}) ||
      refId(a).localeCompare(refId(b)));
  };

  const renderTable = () => {
    const focused = document.activeElement;
    const next = new Map();
    for (const o of sorted()) {
      const id = refId(o);
      let tr = rows.get(id);
      if (tr) fillRow(tr, o);
      else tr = row(o);
      next.set(id, tr);
    }
    for (const id of selected) if (!next.has(id)) selected.delete(id);
    rows.clear();
    for (const [id, tr] of next) rows.set(id, tr);
    tbody.replaceChildren(...next.values());
    if (!data.objects.length) {
      tbody.append(h('tr', {}, h('td', {colspan: 9, class: 'empty'}, 'No object matches these filters.')));
    }
    if (focused && focused !== document.activeElement && document.contains(focused)) focused.focus();
    syncSelection();
  };

  const renderSections = () => {
    const hidden = data.hidden || [];
    renderHidden(sections.hidden, hidden, filters.namespace);
    renderAttention(sections.attention, data.attention, hidden.length);
    renderCounts(sections.counts, data.counts, hidden.length);
    renderSuspended(sections.suspended, data.suspended);
  };

  const load = async () => {
    try {
      data = await get('/api/overview' + query(filters));
    } catch (err) {
      sections.attention.replaceChildren(h('p', {class: 'error', role: 'alert'}, `Could not load the overview: ${err.message}`));
      return;
    }
    renderSections();
    renderTable();
    main.dataset.loaded = 'true';
  };

  const namespaces = [];
  main.dataset.loaded = 'false';
  main.replaceChildren(
    h('h1', {}, 'Overview'),
    filterBar(filters, namespaces, (f) => {
      filters = f;
      load();
    }),
    sections.hidden,
    sections.attention,
    sections.counts,
    sections.suspended,
    h('section', {'aria-labelledby': 'objects-title'},
      h('h2', {id: 'objects-title'}, 'Objects'),
      h('div', {class: 'toolbar', role: 'toolbar', 'aria-label': 'Actions on the selected objects', 'data-testid': 'bulk-actions'},
        countText, ...bulkButtons),
      status,
      h('div', {class: 'table-wrap'},
        h('table', {class: 'objects', 'data-testid': 'objects-table'},
          h('caption', {class: 'sr-only'}, 'Every toolkit object, the ones needing attention first'),
          h('thead', {}, h('tr', {},
            h('th', {scope: 'col'}, selectAll),
            ...headers)),
          tbody))));
  await load();
  if (data) {
    const seen = new Set(data.objects.map((o) => o.namespace));
    for (const n of [...seen].sort()) namespaces.push(n);
    const list = document.getElementById('namespaces');
    if (list) list.replaceChildren(...namespaces.map((n) => h('option', {value: n})));
  }

  const refresh = debounce(load, 400);
  const off = on('object', (o) => {
    const tr = rows.get(refId(o));
    if (tr && !o.deleted) fillRow(tr, o);
    refresh();
  });
  return off;
}

// The object table's columns after the checkbox, and their titles.
const columns = ['state', 'kind', 'namespace', 'name', 'revision', 'sync', 'next', 'reason'];
const columnTitles = ['State', 'Kind', 'Namespace', 'Name', 'Revision', 'Sync', 'Next run', 'Reason and message'];

// fillRow writes an object's cells into its row (kept: the checkbox).
function fillRow(tr, o) {
  const sig = JSON.stringify([o.state, o.revision, o.sync, o.lastRun, o.interval, o.reason, o.message, o.suspended, o.suspendedBy, o.suspendReason]);
  if (tr.dataset.sig === sig) return;
  tr.dataset.sig = sig;
  const cells = [
    badge(o.state),
    o.kind,
    o.namespace,
    objectLink(o, o.name),
    h('code', {class: 'revision', title: o.revision || ''}, o.revision ? shortRevision(o.revision) : ''),
    o.sync ? h('span', {class: 'sync', 'data-testid': 'sync'}, o.sync) : '',
    nextRunLabel(o),
    reasonCell(o),
  ];
  while (tr.children.length > 1) tr.lastChild.remove();
  // Each cell carries its column's name: on a narrow screen the row is a
  // card and the header is not shown (app.css).
  cells.forEach((c, i) => tr.append(h('td', {dataset: {col: columns[i]}}, c)));
  tr.dataset.state = o.state;
}

function reasonCell(o) {
  if (o.suspended) {
    return h('span', {}, `suspended${o.suspendedBy ? ` by ${o.suspendedBy}` : ''}${o.suspendReason ? `: ${o.suspendReason}` : ''}`);
  }
  if (!o.reason && !o.message) return '';
  return h('span', {class: 'message'}, h('strong', {}, o.reason || ''), o.message ? ` ${o.message}` : '');
}

function renderAttention(section, items, hiddenKinds = 0) {
  clear(section).append(h('h2', {id: 'attention-title'}, `Needs attention (${items.length})`));
  if (!items.length) {
    section.append(hiddenKinds
      ? h('p', {'data-testid': 'attention-empty'},
        `Nothing you may see is stalled or failing; ${hiddenKinds === 1 ? '1 kind is' : `${hiddenKinds} kinds are`} hidden from you (above).`)
      : h('p', {class: 'all-good', 'data-testid': 'attention-empty'}, 'Nothing is stalled or failing.'));
    return;
  }
  section.append(h('ol', {class: 'attention', 'data-testid': 'attention'}, items.map((o) =>
    h('li', {'data-testid': 'attention-item', dataset: {id: refId(o), state: o.state}},
      h('div', {class: 'attention-head'}, badge(o.state), ' ', objectLink(o), ' ', h('strong', {}, o.reason || ''),
        o.lastTransition ? [' · since ', time(o.lastTransition)] : ''),
      h('p', {class: 'message'}, o.message || '')))));
}

function renderCounts(section, counts, hiddenKinds = 0) {
  clear(section).append(h('h2', {id: 'counts-title'}, 'Counts'));
  const total = {kind: hiddenKinds ? 'All kinds you may list' : 'All kinds', total: 0};
  for (const s of states) total[s] = 0;
  for (const c of counts) {
    total.total += c.total;
    for (const s of states) total[s] += c[s] || 0;
  }
  const line = (c, head) => h('tr', {dataset: {kind: c.kind}},
    h('th', {scope: 'row'}, c.kind), h(head ? 'th' : 'td', {class: 'num'}, c.total),
    ...states.map((s) => h('td', {class: `num${c[s] ? ` count-${s}` : ''}`}, c[s] || 0)));
  section.append(h('div', {class: 'table-wrap'}, h('table', {class: 'counts', 'data-testid': 'counts'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Kind'), h('th', {scope: 'col', class: 'num'}, 'Total'),
      ...states.map((s) => h('th', {scope: 'col', class: 'num'}, stateInfo[s].label)))),
    h('tbody', {}, counts.map((c) => line(c))),
    h('tfoot', {}, line(total, true)))));
}

function renderSuspended(section, items) {
  clear(section).append(h('h2', {id: 'suspended-title'}, `Suspended (${items.length})`));
  if (!items.length) {
    section.append(h('p', {}, 'Nothing is suspended.'));
    return;
  }
  section.append(h('ul', {class: 'suspended', 'data-testid': 'suspended'}, items.map((o) =>
    h('li', {'data-testid': 'suspended-item', dataset: {id: refId(o)}},
      objectLink(o), ' — suspended', o.suspendedBy ? [' by ', h('strong', {}, o.suspendedBy)] : '',
      o.suspendReason ? [': ', h('q', {}, o.suspendReason)] : ' (no reason given)'))));
}
