// One object's page: summary, actions, what would change, conditions, live
// events, inventory tree and history.
import {get} from './api.js';
import {h, badge, clear, debounce, nextRunLabel, objectLink, refId, time} from './dom.js';
import {on} from './live.js';
import {actionLabels, run} from './actions.js';
import {renderDiff} from './diff.js';
import {podLogs} from './podlogs.js';

export async function objectPage(main, params) {
  const ref = {kind: params.kind, namespace: params.namespace, name: params.name};
  const base = `/api/objects/${encodeURIComponent(ref.kind)}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;
  const id = refId(ref);
  const parts = {
    summary: h('section', {'aria-label': 'Summary', 'data-testid': 'summary'}),
    actions: h('section', {'aria-labelledby': 'actions-title'}),
    diff: h('section', {'aria-labelledby': 'diff-title', 'data-testid': 'diff-section'}),
    conditions: h('section', {'aria-labelledby': 'conditions-title'}),
    events: h('section', {'aria-labelledby': 'events-title'}),
    helm: h('section', {'aria-labelledby': 'helm-title', 'data-testid': 'helm-section', hidden: true}),
    tree: h('section', {'aria-labelledby': 'tree-title'}),
    history: h('section', {'aria-labelledby': 'history-title'}),
    spec: h('section', {'aria-labelledby': 'spec-title'}),
  };
  main.dataset.loaded = 'false';
  main.replaceChildren(h('h1', {}, h('span', {class: 'kind'}, ref.kind), ' ', `${ref.namespace}/${ref.name}`),
    ...Object.values(parts));
  let data = null;
  const logs = podLogs();
  const status = h('p', {id: 'action-status', class: 'action-status', role: 'status', 'data-testid': 'action-status'});
  const buttons = actionButtons(ref, status);
  parts.actions.append(h('h2', {id: 'actions-title'}, 'Actions'), buttons.el, status);

  const load = async () => {
    try {
      data = await get(base);
    } catch (err) {
      parts.summary.replaceChildren(h('p', {class: 'error', role: 'alert'}, `Could not load ${id}: ${err.message}`));
      return false;
    }
    renderSummary(parts.summary, data);
    buttons.update(data);
    renderConditions(parts.conditions, data.conditions || []);
    renderHelm(parts.helm, data.helm);
    renderTree(parts.tree, data.tree, logs);
    renderHistory(parts.history, data.history || []);
    renderSpec(parts.spec, data.specYAML);
    return true;
  };
  const events = eventsTable(parts.events);
  const loadEvents = async () => {
    try {
      events.set(await get(`${base}/events`));
    } catch (err) {
      events.error(err.message);
    }
  };
  // The diff is recomputed, one at a time, whenever the object, its
  // source or an object it applied changes; the last one stays shown
  // (marked as being recomputed) until the next arrives.
  const diffs = {running: false, again: false, count: 0};
  const hasDiff = diffable(ref.kind);
  const loadDiff = async () => {
    if (!hasDiff) {
      renderDiff(parts.diff, {state: 'notApplicable',
        error: `A ${ref.kind} applies nothing to the cluster: what would change is shown for Kustomizations and HelmReleases.`});
      return;
    }
    if (diffs.running) {
      diffs.again = true;
      return;
    }
    diffs.running = true;
    if (!diffs.count) {
      clear(parts.diff).append(h('h2', {id: 'diff-title'}, 'What would change'),
        h('p', {class: 'loading', 'data-testid': 'diff-loading'}, 'Rendering the source and asking the API server for a dry run…'));
    } else {
      parts.diff.dataset.recomputing = 'true';
    }
    try {
      renderDiff(parts.diff, await get(`${base}/diff`), new Date());
    } catch (err) {
      renderDiff(parts.diff, {state: 'failed', error: err.message}, new Date());
    }
    diffs.count++;
    parts.diff.dataset.computed = String(diffs.count);
    delete parts.diff.dataset.recomputing;
    diffs.running = false;
    if (diffs.again) {
      diffs.again = false;
      loadDiff();
    }
  };
  const recomputeDiff = debounce(loadDiff, 1000);
  if (await load()) {
    await loadEvents();
    main.dataset.loaded = 'true';
    loadDiff();
  }
  const reload = debounce(load, 300);
  const offObject = on('object', (o) => {
    if (data && touches(data, o)) recomputeDiff();
    if (refId(o) !== id || !data) return;
    if (o.deleted) {
      parts.summary.prepend(h('p', {class: 'error', role: 'alert'}, `${id} was deleted.`));
      return;
    }
    data.summary = o;
    renderSummary(parts.summary, data);
    buttons.update(data);
    reload();
  });
  const offEvent = on('k8sevent', (e) => {
    if (e.ref && refId(e.ref) === id) events.add(e.event);
  });
  return () => {
    offObject();
    offEvent();
    logs.close();
  };
}

// diffable says whether the kind applies objects, so has a diff.
function diffable(kind) {
  return kind === 'Kustomization' || kind === 'HelmRelease';
}

// touches reports whether a change of o may change the page's diff: the
// object itself (a new spec, or an apply that ended), its source (a new
// artifact) or a toolkit object of its inventory tree (the live stream
// carries toolkit objects only).
function touches(data, o) {
  const oid = refId(o);
  if (oid === refId(data.summary)) return true;
  if (data.source && oid === refId(data.source)) return true;
  const walk = (nodes) => (nodes || []).some((n) => refId(n) === oid || walk(n.children));
  return walk(data.tree ? data.tree.children : []);
}

function renderSummary(section, data) {
  const o = data.summary;
  const rows = [
    ['State', h('span', {id: 'object-state', 'data-testid': 'object-state', dataset: {state: o.state}}, badge(o.state))],
    ['Revision', h('code', {id: 'object-revision'}, o.revision || '—')],
    ['Reason', h('span', {id: 'object-reason'}, o.reason || '—')],
    ['Message', h('span', {id: 'object-message', class: 'message'}, o.message || '—')],
  ];
  if (o.state === 'waiting' && (o.waitingFor || []).length) {
    rows.push(['Waiting for', h('ul', {class: 'inline', 'data-testid': 'waiting-for'},
      o.waitingFor.map((d) => h('li', {}, objectLink(d))))]);
  }
  if (o.lastTransition) rows.push([o.state === 'ready' ? 'Ready since' : 'Since', time(o.lastTransition)]);
  if (o.suspended || o.interval) {
    rows.push(['Next run', h('span', {}, nextRunLabel(o), o.lastRun ? [' · last run ', time(o.lastRun)] : '',
      o.interval ? ` · every ${interval(o.interval)}` : '')]);
  }
  if (o.suspended) {
    rows.push(['Suspended', h('span', {'data-testid': 'suspended-info'},
      `by ${o.suspendedBy || 'unknown'}${o.suspendReason ? `: ${o.suspendReason}` : ' (no reason given)'}`)]);
  }
  if (o.shard) rows.push(['Shard', h('code', {'data-testid': 'object-shard'}, o.shard)]);
  if (data.source) rows.push(['Source', objectLink(data.source)]);
  if (data.appliedBy) rows.push(['Applied by', h('span', {'data-testid': 'applied-by'}, objectLink(data.appliedBy))]);
  if (data.consumers) {
    rows.push(['Read by', data.consumers.length
      ? h('ul', {class: 'inline', 'data-testid': 'consumers'}, data.consumers.map((c) => h('li', {}, objectLink(c))))
      : h('span', {'data-testid': 'consumers'}, 'nothing you may list')]);
  }
  if (data.dependsOn && data.dependsOn.length) {
    rows.push(['Depends on', h('ul', {class: 'inline'}, data.dependsOn.map((d) => h('li', {}, objectLink(d))))]);
  }
  clear(section).append(h('dl', {class: 'summary'}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
}

// actionButtons builds the four buttons; update enables each by the
// server's permission check and the object's state, writing why next to a
// disabled one.
function actionButtons(ref, status) {
  const el = h('div', {class: 'actions', 'data-testid': 'actions'});
  const items = {};
  for (const action of Object.keys(actionLabels)) {
    const why = h('span', {class: 'why', id: `action-${action}-why`, 'data-testid': `action-${action}-why`});
    const button = h('button', {type: 'button', id: `action-${action}`, 'data-testid': `action-${action}`,
      'aria-describedby': why.id}, actionLabels[action]);
    button.addEventListener('click', async () => {
      const results = await run(action, [ref], status);
      if (results) button.focus();
    });
    items[action] = {button, why, wrap: h('div', {class: 'action'}, button, why)};
    el.append(items[action].wrap);
  }
  const update = (data) => {
    const perms = data.permissions || {};
    const o = data.summary;
    const check = {
      'reconcile': [perms.reconcile, o.suspended ? `${refId(ref)} is suspended: resume it first` : ''],
      'reconcile-source': [perms.reconcileSource || perms.reconcile, !hasSource(data, ref) ? `${ref.kind} has no source to reconcile` : o.suspended ? `${refId(ref)} is suspended: resume it first` : ''],
      'suspend': [perms.suspend, o.suspended ? 'already suspended' : ''],
      'resume': [perms.resume, o.suspended ? '' : 'not suspended'],
    };
    for (const [action, [perm, stateWhy]] of Object.entries(check)) {
      const {button, why} = items[action];
      const denied = perm && !perm.allowed ? (perm.reason || 'not allowed') : '';
      const reason = denied || stateWhy;
      button.disabled = Boolean(reason);
      button.dataset.denied = denied ? 'true' : 'false';
      why.textContent = reason;
    }
  };
  return {el, update};
}

// hasSource: the page's source reference when the server sends one, else
// the kinds that have a source (those `flux reconcile --with-source` takes).
function hasSource(data, ref) {
  if (data.source !== undefined) return data.source !== null;
  return ref.kind === 'Kustomization' || ref.kind === 'HelmRelease';
}

function renderConditions(section, conditions) {
  clear(section).append(h('h2', {id: 'conditions-title'}, 'Conditions'));
  if (!conditions.length) {
    section.append(h('p', {}, 'No conditions yet.'));
    return;
  }
  section.append(h('div', {class: 'table-wrap'}, h('table', {'data-testid': 'conditions'},
    h('thead', {}, h('tr', {}, ['Type', 'Status', 'Reason', 'Message', 'Last transition'].map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, conditions.map((c) => h('tr', {dataset: {type: c.type}},
      h('th', {scope: 'row'}, c.type), h('td', {}, c.status), h('td', {}, c.reason),
      h('td', {class: 'message'}, c.message), h('td', {}, time(c.lastTransitionTime))))))));
}

// eventsTable keeps the events newest first; a live event with the same
// type, reason and message as a row updates that row.
function eventsTable(section) {
  const tbody = h('tbody', {id: 'events-body'});
  const empty = h('p', {'data-testid': 'events-empty'}, 'No events.');
  section.append(h('h2', {id: 'events-title'}, 'Events ', h('span', {class: 'hint'}, '(live)')),
    h('div', {class: 'table-wrap'}, h('table', {'data-testid': 'events'},
      h('thead', {}, h('tr', {}, ['Type', 'Reason', 'Message', 'Count', 'Last seen', 'From'].map((t) => h('th', {scope: 'col'}, t)))),
      tbody)), empty);
  const key = (e) => `${e.type}\u0000${e.reason}\u0000${e.message}`;
  const row = (e) => h('tr', {'data-testid': 'event-row', dataset: {key: key(e), type: e.type || '', reason: e.reason || ''}},
    h('td', {class: e.type === 'Warning' ? 'warning' : ''}, e.type === 'Warning' ? '⚠ Warning' : e.type),
    h('td', {}, e.reason), h('td', {class: 'message'}, e.message), h('td', {class: 'num'}, e.count || 1),
    h('td', {}, time(e.lastTime || e.firstTime)), h('td', {}, e.source || ''));
  const sync = () => {
    empty.hidden = tbody.children.length > 0;
  };
  return {
    set(list) {
      tbody.replaceChildren(...(list || []).map(row));
      sync();
    },
    add(e) {
      for (const tr of tbody.children) if (tr.dataset.key === key(e)) tr.remove();
      tbody.prepend(row(e));
      sync();
    },
    error(msg) {
      empty.hidden = false;
      empty.textContent = `Could not load events: ${msg}`;
    },
  };
}

function renderTree(section, tree, logs) {
  clear(section).append(h('h2', {id: 'tree-title'}, 'Inventory'));
  if (!tree || !(tree.children || []).length) {
    section.append(h('p', {}, 'Nothing applied yet.'));
    return;
  }
  const name = (n) => `${n.kind}/${n.namespace ? n.namespace + '/' : ''}${n.name}`;
  const node = (n) => h('li', {'data-testid': 'tree-node', dataset: {kind: n.kind, name: n.name}},
    n.state ? [badge(n.state), ' '] : '', toolkit(n) ? objectLink(n, name(n)) : h('span', {}, name(n)),
    n.pod ? podFacts(n.pod) : '',
    n.childrenError ? h('p', {class: 'hint', 'data-testid': 'children-error'}, n.childrenError) : '',
    n.pod ? logs.pane(n) : '',
    (n.children || []).length ? h('ul', {}, n.children.map(node)) : '');
  section.append(h('ul', {class: 'tree', 'data-testid': 'tree'}, (tree.children || []).map(node)));
}

// podFacts is a Pod's phase, ready containers and restarts.
function podFacts(p) {
  return h('span', {class: 'pod-facts', 'data-testid': 'pod-facts'},
    ` ${p.phase || 'Unknown'} · ready ${p.ready} · ${p.restarts} ${p.restarts === 1 ? 'restart' : 'restarts'}`);
}

function toolkit(n) {
  return /\.toolkit\.fluxcd\.io\//.test(n.apiVersion || '') && n.namespace;
}

function renderHistory(section, history) {
  clear(section).append(h('h2', {id: 'history-title'}, 'History'));
  if (!history.length) {
    section.append(h('p', {}, 'No history recorded.'));
    return;
  }
  // A HelmRelease's snapshots carry Helm's release revision (vN).
  const helm = history.some((e) => e.helmRevision);
  const titles = [...(helm ? ['Helm revision'] : []), 'Revision', 'First reconciled', 'Last reconciled', 'Reconciliations', 'Status', 'Digest'];
  section.append(h('div', {class: 'table-wrap'}, h('table', {'data-testid': 'history'},
    h('thead', {}, h('tr', {}, titles.map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, history.map((e) => h('tr', {},
      helm ? h('td', {class: 'num', 'data-testid': 'helm-revision'}, e.helmRevision ? `v${e.helmRevision}` : '') : '',
      h('td', {}, h('code', {}, e.revision)), h('td', {}, time(e.firstReconciled)), h('td', {}, time(e.lastReconciled)),
      h('td', {class: 'num'}, e.totalReconciliations), h('td', {}, e.lastReconciledStatus), h('td', {}, h('code', {}, e.digest || ''))))))));
}

// renderSpec shows the live spec as YAML, folded.
function renderSpec(section, yaml) {
  clear(section).append(h('h2', {id: 'spec-title'}, 'Spec'));
  if (!yaml) {
    section.append(h('p', {}, 'No spec.'));
    return;
  }
  section.append(h('details', {'data-testid': 'spec'}, h('summary', {}, 'The live spec as YAML'),
    h('pre', {class: 'yaml', tabindex: 0}, yaml)));
}

// renderHelm shows a HelmRelease's chart and its merged values, each
// top-level key with the layers that set it (what a Secret gave arrives
// masked from the server).
function renderHelm(section, helm) {
  section.hidden = !helm;
  if (!helm) return;
  const c = helm.chart || {};
  const rows = [
    ['Chart', h('code', {'data-testid': 'chart-name'}, c.name || '—')],
    ['Version', h('code', {'data-testid': 'chart-version'}, c.version || '—')],
  ];
  if (c.appVersion) rows.push(['App version', h('code', {}, c.appVersion)]);
  rows.push(['Digest', h('code', {'data-testid': 'chart-digest'}, c.digest || '—')]);
  if (c.helmChart) rows.push(['From', objectLink(c.helmChart)]);
  clear(section).append(h('h2', {id: 'helm-title'}, 'Chart and values'),
    h('dl', {class: 'summary'}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
  if (helm.valuesError) {
    section.append(h('p', {class: 'error', 'data-testid': 'values-error'}, helm.valuesError));
    return;
  }
  if (!helm.valuesYAML) {
    section.append(h('p', {'data-testid': 'values-empty'}, 'No values: the chart\'s defaults apply.'));
    return;
  }
  section.append(h('div', {class: 'table-wrap'}, h('table', {'data-testid': 'value-origins'},
      h('caption', {}, 'Where each top-level key comes from (in merge order, the last wins)'),
      h('thead', {}, h('tr', {}, ['Key', 'From'].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, (helm.origins || []).map((o) => h('tr', {dataset: {key: o.key}},
        h('th', {scope: 'row'}, h('code', {}, o.key)),
        h('td', {}, o.from.join(', '), o.masked ? h('span', {class: 'hint'}, ' (Secret values masked)') : '')))))),
    h('details', {'data-testid': 'values', open: true}, h('summary', {}, 'The merged values'),
      h('pre', {class: 'yaml', tabindex: 0}, helm.valuesYAML)));
}

// interval writes seconds as spec.interval would: 1h30m, 5m, 45s.
function interval(sec) {
  const parts = [];
  for (const [unit, n] of [['h', 3600], ['m', 60], ['s', 1]]) {
    if (sec >= n) {
      parts.push(`${Math.floor(sec / n)}${unit}`);
      sec %= n;
    }
  }
  return parts.join('') || '0s';
}
