// Entry point: who is logged in, the live stream, the routes and the
// keyboard shortcut.
import {whoami} from './api.js';
import {h} from './dom.js';
import {loginView} from './login.js';
import {connect} from './live.js';
import {route, start, navigate} from './router.js';
import {overview} from './overview.js';
import {graph} from './graph.js';
import {objectPage} from './object.js';

route('/', overview);
route('/graph', graph);
route('/objects/:kind/:namespace/:name', objectPage);

// "/" focuses the search field, wherever focus is, except while typing.
document.addEventListener('keydown', (ev) => {
  if (ev.key !== '/' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
  ev.preventDefault();
  const search = document.getElementById('search');
  if (search) {
    search.focus();
    search.select();
  } else {
    navigate('/', {focusMain: false});
    requestAnimationFrame(() => document.getElementById('search')?.focus());
  }
});

async function boot() {
  const who = document.getElementById('whoami');
  try {
    const w = await whoami();
    who.textContent = `${w.user} (${w.mode})`;
  } catch (err) {
    who.textContent = 'not logged in';
    if (err.status === 401) {
      loginView(document.getElementById('main'), err.message, boot, err.mode);
      return;
    }
    document.getElementById('main').replaceChildren(h('p', {class: 'error', role: 'alert'}, err.message));
    return;
  }
  connect();
  await start();
}

boot();
