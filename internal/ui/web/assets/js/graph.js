// The graph: one column per layer of /api/graph, nodes coloured by state
// and labelled with it, the revision under the name, where a chain waits
// written out, source edges solid, dependsOn edges dashed, and the edges
// from a Kustomization to the toolkit objects it applied dotted.
import {get, query} from './api.js';
import {h, s, stateInfo, objectPath, debounce, shortRevision} from './dom.js';
import {filterBar, readFilters, renderHidden} from './filters.js';
import {on} from './live.js';

const W = 250, H = 92, GX = 70, GY = 24, PAD = 20;

export async function graph(main, _params, params) {
  let filters = readFilters(params);
  const holder = h('div', {class: 'graph-wrap', id: 'graph', 'data-testid': 'graph'});
  const waits = h('section', {'aria-labelledby': 'waiting-title'});
  const hidden = h('div', {'data-testid': 'hidden-kinds', hidden: true});
  const nodes = new Map(); // id → <a>
  main.dataset.loaded = 'false';
  const load = async () => {
    let g;
    try {
      g = await get('/api/graph' + query(filters));
    } catch (err) {
      holder.replaceChildren(h('p', {class: 'error', role: 'alert'}, `Could not load the graph: ${err.message}`));
      return;
    }
    nodes.clear();
    renderHidden(hidden, g.hidden || [], filters.namespace);
    holder.replaceChildren(draw(g, nodes));
    renderWaits(waits, g.nodes);
    main.dataset.loaded = 'true';
    main.dataset.nodes = String(g.nodes.length);
  };
  main.replaceChildren(
    h('h1', {}, 'Graph'),
    filterBar(filters, [], (f) => {
      filters = f;
      load();
    }),
    hidden,
    legend(),
    holder,
    waits);
  await load();
  const refresh = debounce(load, 400);
  return on('object', (o) => {
    const a = nodes.get(`${o.kind}/${o.namespace}/${o.name}`);
    if (a && !o.deleted) {
      setNodeState(a, o.state);
      if (o.revision !== undefined) a.querySelector('.node-revision').textContent = shortRevision(o.revision);
    }
    refresh();
  });
}

function legend() {
  return h('div', {class: 'legend', 'aria-label': 'Legend'},
    h('span', {class: 'legend-item'}, h('span', {class: 'edge-sample source', 'aria-hidden': 'true'}), 'source (solid)'),
    h('span', {class: 'legend-item'}, h('span', {class: 'edge-sample dependsOn', 'aria-hidden': 'true'}), 'dependsOn (dashed)'),
    h('span', {class: 'legend-item'}, h('span', {class: 'edge-sample applies', 'aria-hidden': 'true'}), 'applied by (dotted)'),
    ...Object.entries(stateInfo).map(([k, v]) =>
      h('span', {class: `badge state-${k}`}, h('span', {'aria-hidden': 'true', class: 'icon'}, v.icon), ' ', v.label)));
}


function clip(text, n) {
  return text.length > n ? text.slice(0, n - 1) + '…' : text;
}

function place(n) {
  return {x: PAD + n.layer * (W + GX), y: PAD + n.order * (H + GY)};
}

function draw(g, nodes) {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const layers = Math.max(0, ...g.nodes.map((n) => n.layer)) + 1;
  const rows = Math.max(0, ...g.nodes.map((n) => n.order)) + 1;
  const width = PAD * 2 + layers * W + (layers - 1) * GX;
  const height = PAD * 2 + rows * H + (rows - 1) * GY;
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, width, height, role: 'group',
    'aria-label': `Dependency graph: ${g.nodes.length} objects, ${g.edges.length} edges`, 'data-testid': 'graph-svg'},
  s('defs', {},
    marker('arrow-source', 'source'),
    marker('arrow-dependsOn', 'dependsOn'),
    marker('arrow-applies', 'applies')));
  const edges = s('g', {class: 'edges', 'aria-hidden': 'true'});
  for (const e of g.edges) {
    const from = byId.get(e.from), to = byId.get(e.to);
    if (!from || !to) continue;
    const a = place(from), b = place(to);
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    const mid = (x1 + x2) / 2;
    let d = `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`;
    if (to.layer - from.layer > 1) {
      // Across layers between them: along the gap above the target's
      // row, not behind the nodes in the way.
      const gy = b.y - GY / 2, bend = GX / 2;
      d = `M${x1},${y1} C${x1 + bend},${y1} ${x1 + bend},${gy} ${x1 + GX},${gy} L${x2 - GX},${gy} ` +
        `C${x2 - bend},${gy} ${x2 - bend},${y2} ${x2},${y2}`;
    }
    edges.append(s('path', {class: `edge ${e.type}`, 'data-testid': 'graph-edge', 'data-type': e.type,
      d, 'marker-end': `url(#arrow-${e.type})`}));
  }
  svg.append(edges);
  const group = s('g', {class: 'nodes'});
  for (const n of g.nodes) {
    const a = node(n);
    nodes.set(n.id, a);
    group.append(a);
  }
  svg.append(group);
  return svg;
}

function marker(id, type) {
  return s('marker', {id, viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto-start-reverse'},
    s('path', {d: 'M0,0 L10,5 L0,10 z', class: `arrow ${type}`}));
}

function node(n) {
  const {x, y} = place(n);
  const info = stateInfo[n.state] || stateInfo.unknown;
  const label = `${n.kind} ${n.namespace}/${n.name}: ${info.label}, ${n.revision || 'no revision'}${n.waiting ? `; ${n.waiting}` : ''}`;
  const a = s('a', {href: objectPath(n), 'data-link': true, class: `node state-${n.state}`, 'data-testid': 'graph-node',
    'data-id': n.id, 'data-state': n.state, 'aria-label': label, transform: `translate(${x},${y})`},
  s('title', {}, label),
  s('rect', {class: 'node-box', width: W, height: H, rx: 6}),
  s('text', {class: 'node-state', x: 10, y: 17}, `${info.icon} ${info.label}`),
  s('text', {class: 'node-name', x: 10, y: 36}, clip(n.name, 28)),
  s('text', {class: 'node-kind', x: 10, y: 53}, clip(`${n.kind} · ${n.namespace}`, 36)),
  s('text', {class: 'node-revision', x: 10, y: 69}, clip(shortRevision(n.revision), 36)),
  n.waiting ? s('text', {class: 'node-waiting', x: 10, y: 85, 'data-testid': 'graph-waiting-text'}, clip(`waiting: ${n.waiting}`, 42)) : null);
  return a;
}

function setNodeState(a, state) {
  const info = stateInfo[state] || stateInfo.unknown;
  a.setAttribute('class', `node state-${state}`);
  a.dataset.state = state;
  a.querySelector('.node-state').textContent = `${info.icon} ${info.label}`;
}

function renderWaits(section, nodes) {
  const waiting = nodes.filter((n) => n.waiting);
  section.replaceChildren(h('h2', {id: 'waiting-title'}, `Waiting (${waiting.length})`));
  if (!waiting.length) {
    section.append(h('p', {}, 'No chain is waiting.'));
    return;
  }
  section.append(h('ul', {'data-testid': 'graph-waiting'}, waiting.map((n) =>
    h('li', {}, h('a', {href: objectPath(n), 'data-link': true}, n.id), ': ', n.waiting))));
}
