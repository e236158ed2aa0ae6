// The filter bar shared by the overview and the graph: namespace, kind,
// state and a name search, all kept in the query string.
import {h, kinds, states, stateInfo, debounce} from './dom.js';
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
