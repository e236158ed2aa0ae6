// The filter bar shared by the overview and the graph (namespace, kind,
// state and a name search, all kept in the query string) and the notice of
// the kinds the user may not list in that scope.
import {h, clear, kinds, states, stateInfo, debounce} from './dom.js';
import {setQuery} from './router.js';

export const filterKeys = ['namespace', 'kind', 'state', 'q'];

export function readFilters(params) {
  const f = {};
  for (const k of filterKeys) f[k] = params.get(k) || '';
  return f;
}

function select(id, label, value, options) {
  return h('div', {class: 'field'},
    h('label', {for: id}, label),
    h('select', {id, name: id.replace('filter-', '')},
      h('option', {value: ''}, 'all'),
      options.map(([v, text]) => h('option', {value: v, selected: v === value}, text))));
}

// filterBar builds the form; onChange gets the new filters after each edit.
export function filterBar(filters, namespaces, onChange) {
  const form = h('form', {class: 'filters', id: 'filters', role: 'search', 'aria-label': 'Filter objects'},
    h('div', {class: 'field grow'},
      h('label', {for: 'search'}, 'Name ', h('kbd', {}, '/')),
      h('input', {id: 'search', name: 'q', type: 'search', value: filters.q, placeholder: 'search by name',
        autocomplete: 'off', 'data-testid': 'search'})),
    h('div', {class: 'field'},
      h('label', {for: 'filter-namespace'}, 'Namespace'),
      h('input', {id: 'filter-namespace', name: 'namespace', type: 'text', list: 'namespaces', value: filters.namespace,
        autocomplete: 'off'}),
      h('datalist', {id: 'namespaces'}, namespaces.map((n) => h('option', {value: n})))),
    select('filter-kind', 'Kind', filters.kind, kinds.map((k) => [k, k])),
    select('filter-state', 'State', filters.state, states.map((s) => [s, stateInfo[s].label])));
  const changed = () => {
    const f = {};
    for (const k of filterKeys) f[k] = form.elements[k].value.trim();
    setQuery(f);
    onChange(f);
  };
  const typed = debounce(changed, 200);
  form.addEventListener('input', (ev) => (ev.target.tagName === 'SELECT' ? changed() : typed()));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    changed();
  });
  return form;
}

// renderHidden says which kinds the user may not list where they look:
// what those hold is neither counted nor in the attention list, so the
// page must not read as an all-clear.
export function renderHidden(section, hidden, namespace) {
  clear(section).hidden = !hidden.length;
  if (!hidden.length) return;
  const where = namespace ? `in namespace ${namespace}` : 'cluster-wide';
  const n = hidden.length === 1 ? '1 kind' : `${hidden.length} kinds`;
  section.className = 'notice';
  section.setAttribute('role', 'status');
  section.append(h('p', {},
    h('strong', {}, `You may not list ${n} ${where}: `), hidden.join(', '), '. ',
    namespace ? 'What they hold is not shown or counted here.'
      : 'What they hold is not shown or counted here — pick a namespace you may read.'));
}
