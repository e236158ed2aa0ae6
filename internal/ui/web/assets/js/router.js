// A client-side router on the History API: the path picks the view, the
// query string holds its filters, so a copied URL reproduces the view.

const routes = [];
let cleanup = null;

// route registers a view for a path pattern with :params.
export function route(pattern, view) {
  const names = [];
  const re = new RegExp('^' + pattern.replace(/:(\w+)/g, (_, n) => {
    names.push(n);
    return '([^/]+)';
  }) + '/?$');
  routes.push({re, names, view});
}

function match(pathname) {
  for (const r of routes) {
    const m = r.re.exec(pathname);
    if (!m) continue;
    const params = {};
    r.names.forEach((n, i) => {
      params[n] = decodeURIComponent(m[i + 1]);
    });
    return {view: r.view, params};
  }
  return null;
}

// render shows the view of the current location in #main.
export async function render() {
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  const main = document.getElementById('main');
  const m = match(location.pathname);
  for (const a of document.querySelectorAll('.nav a')) {
    a.toggleAttribute('aria-current', new URL(a.href).pathname === location.pathname);
    if (a.hasAttribute('aria-current')) a.setAttribute('aria-current', 'page');
  }
  if (!m) {
    main.replaceChildren(notFound());
    return;
  }
  const params = new URLSearchParams(location.search);
  cleanup = (await m.view(main, m.params, params)) || null;
}

function notFound() {
  const p = document.createElement('p');
  p.textContent = `No page at ${location.pathname}.`;
  return p;
}

// navigate goes to url, adding a history entry, and renders it.
export function navigate(url, {focusMain = true} = {}) {
  history.pushState(null, '', url);
  render().then(() => {
    if (focusMain) document.getElementById('main').focus({preventScroll: false});
  });
}

// setQuery replaces the query string of the current entry (filters typed
// do not each add a history entry).
export function setQuery(filters) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  const s = q.toString();
  history.replaceState(null, '', location.pathname + (s ? `?${s}` : ''));
}

// start wires links and the back button.
export function start() {
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest && ev.target.closest('a[data-link]');
    if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const href = a.getAttribute('href');
    if (!href || href.startsWith('http')) return;
    ev.preventDefault();
    navigate(href);
  });
  window.addEventListener('popstate', () => render());
  return render();
}
