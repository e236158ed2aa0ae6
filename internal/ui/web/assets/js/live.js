// Live updates: one EventSource on /api/stream for the whole page. Views
// subscribe while they are shown and unsubscribe when the router leaves them.

const listeners = {object: new Set(), k8sevent: new Set()};
let source = null;

function indicator(state, text) {
  const el = document.getElementById('live-indicator');
  if (!el) return;
  el.dataset.state = state;
  el.textContent = text;
}

function dispatch(type, ev) {
  let data;
  try {
    data = JSON.parse(ev.data);
  } catch {
    return;
  }
  for (const fn of listeners[type]) fn(data);
}

// connect opens the stream; the browser reconnects by itself after errors.
export function connect() {
  if (source) return;
  source = new EventSource('/api/stream');
  source.addEventListener('open', () => indicator('live', '● live'));
  source.addEventListener('error', () => {
    indicator(source.readyState === EventSource.CLOSED ? 'offline' : 'connecting',
      source.readyState === EventSource.CLOSED ? '○ offline' : '○ reconnecting…');
  });
  // The server says when the API server behind the stream stops (and
  // starts again) answering: the stream itself stays open meanwhile.
  source.addEventListener('cluster', (ev) => {
    let m;
    try {
      m = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (m.reachable) indicator('live', '● live');
    else indicator('offline', '○ API server unreachable');
    const el = document.getElementById('live-indicator');
    if (el) el.title = m.error || '';
  });
  source.addEventListener('object', (ev) => dispatch('object', ev));
  source.addEventListener('k8sevent', (ev) => dispatch('k8sevent', ev));
  // A page left (or kept in the back-forward cache) must not hold its
  // connection: over HTTP/1.1 a browser has six per host.
  window.addEventListener('pagehide', () => {
    source.close();
    source = null;
  }, {once: true});
  window.addEventListener('pageshow', (ev) => {
    if (ev.persisted) connect();
  }, {once: true});
}

// on subscribes fn to one event type and returns the unsubscribe function.
export function on(type, fn) {
  listeners[type].add(fn);
  return () => listeners[type].delete(fn);
}
