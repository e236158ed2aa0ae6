// The logs of the Pods in an object's inventory tree: the last lines of
// each container on demand, "follow" streaming new lines over
// server-sent events until stopped or the page is left. Panes outlive
// the tree's re-renders (one per Pod, kept by name) so an open log or a
// follow survives a live update of the object.
import {get} from './api.js';
import {h} from './dom.js';

export function podLogs() {
  const panes = new Map();
  const follows = new Set();
  const pane = (pod) => {
    const key = `${pod.namespace}/${pod.name}`;
    if (panes.has(key)) return panes.get(key);
    const body = h('div', {class: 'pod-logs-body'});
    const el = h('details', {class: 'pod-logs', 'data-testid': 'pod-logs', dataset: {pod: key}},
      h('summary', {}, 'Logs'), body);
    let loaded = false;
    el.addEventListener('toggle', async () => {
      if (!el.open || loaded) return;
      loaded = true;
      body.replaceChildren(h('p', {class: 'loading'}, 'Reading the last lines of each container…'));
      const base = `/api/pods/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}/logs`;
      try {
        const logs = await get(base);
        body.replaceChildren(...logs.map((l) => container(base, l)));
      } catch (err) {
        body.replaceChildren(h('p', {class: 'error', 'data-testid': 'log-error'}, `Could not read the logs: ${err.message}`));
      }
      el.dataset.loaded = 'true';
    });
    panes.set(key, el);
    return el;
  };
  const container = (base, l) => {
    const pre = h('pre', {class: 'log', tabindex: 0, 'data-testid': 'log-lines'}, l.lines.join('\n'));
    const note = h('p', {class: 'hint', 'data-testid': 'log-note', role: 'status'});
    if (l.error) {
      note.textContent = l.error;
      note.className = 'error';
    } else if (!l.lines.length) {
      note.textContent = 'The log is empty.';
    }
    const button = h('button', {type: 'button', 'data-testid': 'log-follow'}, 'Follow');
    let source = null;
    const stop = () => {
      if (source) source.close();
      follows.delete(stop);
      source = null;
      button.textContent = 'Follow';
      button.setAttribute('aria-pressed', 'false');
    };
    button.addEventListener('click', () => {
      if (source) {
        stop();
        return;
      }
      source = new EventSource(`${base}/${encodeURIComponent(l.container)}/follow`);
      follows.add(stop);
      note.className = 'hint';
      note.textContent = 'Following…';
      button.textContent = 'Stop following';
      button.setAttribute('aria-pressed', 'true');
      source.addEventListener('log', (ev) => {
        if (note.textContent === 'Following…') note.textContent = '';
        pre.textContent += (pre.textContent ? '\n' : '') + ev.data;
        pre.scrollTop = pre.scrollHeight;
      });
      source.addEventListener('failed', (ev) => {
        note.textContent = ev.data;
        note.className = 'error';
        stop();
      });
      source.addEventListener('end', () => {
        note.textContent = 'The log ended.';
        stop();
      });
    });
    return h('div', {class: 'container-log', 'data-testid': 'container-log', dataset: {container: l.container}},
      h('h3', {}, l.container), note, pre, button);
  };
  return {
    pane,
    // close stops every follow (the page is left).
    close() {
      for (const stop of [...follows]) stop();
    },
  };
}
