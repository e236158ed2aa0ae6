// The overview: what needs attention, counts per kind and state, what is
// suspended, and every object in a filterable table with bulk actions.
import {get, query} from './api.js';
import {h, badge, clear, nextRunLabel, objectLink, refId, shortRevision, states, stateInfo, time} from './dom.js';
import {filterBar, readFilters, renderHidden} from './filters.js';
import {on} from './live.js';
import {actionLabels, run} from './actions.js';

export async function overview(main, _params, params) {
  let filters = readFilters(params);
  const selected = new Set();
  const rows = new Map(); // id → row element, in table order
  const shown = new Map(); // id → the object of each row
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
  // The table comes a page at a time (sorted and filtered by the server):
  // the next page on scrolling to its end, or on this button.
  const moreText = h('span', {'data-testid': 'rows-shown', role: 'status'});
  const moreButton = h('button', {type: 'button', 'data-testid': 'more-rows', hidden: true}, 'Show more');
  let data = null;
  let fetching = null;

  const syncSelection = () => {
    for (const b of bulkButtons) b.disabled = selected.size === 0;
    countText.textContent = selected.size ? `${selected.size} selected` : 'none selected';
    const ids = [...rows.keys()];
    selectAll.checked = ids.length > 0 && ids.every((id) => selected.has(id));
    selectAll.indeterminate = !selectAll.checked && ids.some((id) => selected.has(id));
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
      const targets = [...selected].map((id) => shown.get(id)).filter(Boolean)
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

  // sort is the column the server sorts the table by (null: its default
  // order, what needs attention first) and its direction.
  const sort = {col: null, dir: 1};
  // sortBy sorts by col in dir and says so on the header and on the
  // narrow screens' select (one state for both).
  const sortBy = (col, dir) => {
    sort.col = col;
    sort.dir = dir;
    headers.forEach((th, i) => th.setAttribute('aria-sort',
      columns[i] !== col ? 'none' : dir > 0 ? 'ascending' : 'descending'));
    sortSelect.value = col ? `${col}:${dir > 0 ? 'asc' : 'desc'}` : '';
    load();
  };
  const headers = columns.map((col, i) => {
    const button = h('button', {type: 'button', class: 'sort', 'data-testid': `sort-${col}`}, columnTitles[i]);
    const th = h('th', {scope: 'col', 'aria-sort': 'none'}, button);
    button.addEventListener('click', () => sortBy(col, sort.col === col ? -sort.dir : 1));
    return th;
  });
  // On a narrow screen the rows are cards and the header is for screen
  // readers only: this select sorts there, by any column either way.
  const sortSelect = h('select', {id: 'sort-select', 'data-testid': 'sort-select'},
    h('option', {value: ''}, 'What needs attention first'),
    ...columns.flatMap((col, i) => [
      h('option', {value: `${col}:asc`}, `${columnTitles[i]} (A→Z, 0→9)`),
      h('option', {value: `${col}:desc`}, `${columnTitles[i]} (Z→A, 9→0)`),
    ]));
  sortSelect.addEventListener('change', () => {
    const [col, dir] = sortSelect.value.split(':');
    sortBy(col || null, dir === 'desc' ? -1 : 1);
  });
  const sortField = h('p', {class: 'sort-narrow'}, h('label', {for: 'sort-select'}, 'Sort by '), sortSelect);

  const syncMore = () => {
    const total = data ? data.total : 0;
    moreText.textContent = total ? `Showing ${rows.size} of ${total}` : '';
    moreButton.hidden = !data || rows.size >= total;
    moreButton.textContent = `Show ${Math.min(data ? data.limit : 0, total - rows.size)} more`;
  };
  // fill asks for the next page while the end of the table is on screen
  // (the observer only tells when that changes).
  const fill = () => {
    if (!moreButton.hidden && moreButton.getBoundingClientRect().top < window.innerHeight + 400) more();
  };

  // addRows appends a page's objects (a row already shown is skipped: a
  // live change may have moved it across pages).
  const addRows = (objects) => {
    const added = [];
    for (const o of objects) {
      const id = refId(o);
      if (rows.has(id)) continue;
      const tr = row(o);
      rows.set(id, tr);
      shown.set(id, o);
      added.push(tr);
    }
    tbody.append(...added);
  };

  const renderSections = () => {
    const hidden = data.hidden || [];
    renderHidden(sections.hidden, hidden, filters.namespace);
    renderAttention(sections.attention, data.attention, hidden.length);
    renderCounts(sections.counts, data.counts, hidden.length);
    renderSuspended(sections.suspended, data.suspended);
  };

  const fetchPage = (offset) => {
    const q = {...filters, offset: offset ? String(offset) : ''};
    if (sort.col) Object.assign(q, {sort: sort.col, dir: sort.dir > 0 ? 'asc' : 'desc'});
    return get('/api/overview' + query(q));
  };

  // load shows the first page, the sections and the counts anew.
  const load = async () => {
    const req = fetchPage(0);
    fetching = req;
    try {
      data = await req;
    } catch (err) {
      sections.attention.replaceChildren(h('p', {class: 'error', role: 'alert'}, `Could not load the overview: ${err.message}`));
      return;
    } finally {
      if (fetching === req) fetching = null;
    }
    const focused = document.activeElement;
    renderSections();
    rows.clear();
    shown.clear();
    tbody.replaceChildren();
    addRows(data.objects);
    for (const id of selected) if (!rows.has(id)) selected.delete(id);
    if (!data.objects.length) {
      tbody.append(h('tr', {}, h('td', {colspan: 9, class: 'empty'}, 'No object matches these filters.')));
    }
    if (focused && focused !== document.activeElement && document.contains(focused)) focused.focus();
    syncSelection();
    syncMore();
    main.dataset.loaded = 'true';
  };

  // more appends the next page of the same order.
  const more = async () => {
    if (fetching || !data || rows.size >= data.total) return;
    const req = fetchPage(rows.size);
    fetching = req;
    let page;
    try {
      page = await req;
    } catch (err) {
      moreText.textContent = `Could not load more rows: ${err.message}`;
      return;
    } finally {
      if (fetching === req) fetching = null;
    }
    data = {...page, objects: data.objects};
    renderSections();
    addRows(page.objects);
    syncSelection();
    syncMore();
    fill();
  };
  moreButton.addEventListener('click', more);
  const nearEnd = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) more();
  }, {rootMargin: '400px'});
  nearEnd.observe(moreButton);

  main.dataset.loaded = 'false';
  main.replaceChildren(
    h('h1', {}, 'Overview'),
    filterBar(filters, [], (f) => {
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
      sortField,
      h('div', {class: 'table-wrap'},
        h('table', {class: 'objects', 'data-testid': 'objects-table'},
          h('caption', {class: 'sr-only'}, 'Every toolkit object, the ones needing attention first'),
          h('thead', {}, h('tr', {},
            h('th', {scope: 'col'}, selectAll),
            ...headers)),
          tbody)),
      h('p', {class: 'more-rows'}, moreText, ' ', moreButton)));
  await load();
  if (data) {
    const list = document.getElementById('namespaces');
    if (list) list.replaceChildren(...(data.namespaces || []).map((n) => h('option', {value: n})));
  }

  // A change touches its row (if shown), the counts by one, and the
  // attention and suspended lists: never the whole table.
  const off = on('object', (o) => {
    if (!data || !inScope(o, filters)) return;
    const id = refId(o);
    countChange(data.counts, o);
    renderCounts(sections.counts, data.counts, (data.hidden || []).length);
    const keep = !o.deleted && (!filters.state || o.state === filters.state);
    if (placeIn(data.attention, o, keep && attentionStates.has(o.state), compareAttention)) {
      renderAttention(sections.attention, data.attention, (data.hidden || []).length);
    }
    if (placeIn(data.suspended, o, keep && o.state === 'suspended', compareNames)) {
      renderSuspended(sections.suspended, data.suspended);
    }
    const tr = rows.get(id);
    if (tr && o.deleted) {
      tr.remove();
      rows.delete(id);
      shown.delete(id);
      selected.delete(id);
      data.total--;
      syncSelection();
    } else if (tr) {
      fillRow(tr, o);
      shown.set(id, o);
    } else if (!o.was && keep) {
      data.total++; // a new object: on a page not loaded yet
    }
    syncMore();
  });
  return () => {
    off();
    nearEnd.disconnect();
  };
}

// inScope is the server's scope of the counts (namespace, kind and name;
// the state filter aside), for a change the stream brings.
function inScope(o, f) {
  return (!f.namespace || o.namespace === f.namespace) &&
    (!f.kind || o.kind.toLowerCase() === f.kind.toLowerCase()) &&
    (!f.q || o.name.toLowerCase().includes(f.q.toLowerCase()));
}

// countChange moves a kind's counts by one change: out of the state it
// was in, into the one it is in (neither for a creation or a deletion).
function countChange(counts, o) {
  let c = counts.find((x) => x.kind === o.kind);
  if (!c) {
    c = {kind: o.kind, total: 0};
    counts.push(c);
    counts.sort((a, b) => kindRank(a.kind) - kindRank(b.kind));
  }
  if (o.was) {
    c.total--;
    c[o.was] = (c[o.was] || 0) - 1;
  }
  if (!o.deleted) {
    c.total++;
    c[o.state] = (c[o.state] || 0) + 1;
  }
  if (c.total <= 0) counts.splice(counts.indexOf(c), 1);
}

const attentionStates = new Set(['stalled', 'failing']);

// placeIn puts o into list (sorted by compare) when keep, out of it
// otherwise; it reports whether the list changed.
function placeIn(list, o, keep, compare) {
  const id = refId(o);
  const at = list.findIndex((x) => refId(x) === id);
  if (at < 0 && !keep) return false;
  if (at >= 0) list.splice(at, 1);
  if (keep) {
    list.push(o);
    list.sort(compare);
  }
  return true;
}

// kindOrder is the server's order of kinds (internal/view/kinds.All, the
// order of `weir get all`), by which its lists sort.
const kindOrder = ['OCIRepository', 'Bucket', 'GitRepository', 'HelmRepository', 'HelmChart', 'ExternalArtifact',
  'ArtifactGenerator', 'HelmRelease', 'Kustomization', 'Receiver', 'Provider', 'Alert', 'ImageRepository', 'ImagePolicy',
  'ImageUpdateAutomation'];

function kindRank(kind) {
  const i = kindOrder.indexOf(kind);
  return i < 0 ? kindOrder.length : i;
}

function compareNames(a, b) {
  return kindRank(a.kind) - kindRank(b.kind) || cmp(a.namespace, b.namespace) || cmp(a.name, b.name);
}

// compareAttention is the server's order: stalled before failing, newest
// transition first, then by name.
function compareAttention(a, b) {
  const rank = (o) => (o.state === 'stalled' ? 0 : 1);
  return rank(a) - rank(b) || cmp(b.lastTransition || '', a.lastTransition || '') || compareNames(a, b);
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// The object table's columns after the checkbox, and their titles.
const columns = ['state', 'kind', 'namespace', 'name', 'revision', 'sync', 'next', 'reason'];
const columnTitles = ['State', 'Kind', 'Namespace', 'Name', 'Revision', 'Sync', 'Next run', 'Reason and message'];

// fillRow writes an object's cells into its row (kept: the checkbox).
function fillRow(tr, o) {
  const sig = JSON.stringify([o.state, o.revision, o.sync, o.lastRun, o.interval, o.reason, o.message, o.suspended, o.suspendedBy, o.suspendReason, o.shard]);
  if (tr.dataset.sig === sig) return;
  tr.dataset.sig = sig;
  const cells = [
    badge(o.state),
    o.kind,
    o.namespace,
    o.shard ? [objectLink(o, o.name), ' ', h('span', {class: 'shard', title: 'sharding.fluxcd.io/key', 'data-testid': 'shard'}, o.shard)]
      : objectLink(o, o.name),
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
