// Small DOM helpers: every element is built with createElement and
// textContent, never from HTML strings, so no server text is ever parsed as
// markup.

// h builds an element: h('a', {href: '/', class: 'x', dataset: {id: 'k'}}, 'text', child).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const svgNS = 'http://www.w3.org/2000/svg';

// s builds an SVG element the same way.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(svgNS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// The label and icon of each state: colour is never the only signal.
export const stateInfo = {
  ready: {icon: '✔', label: 'Ready'},
  failing: {icon: '✖', label: 'Failing'},
  waiting: {icon: '◷', label: 'Waiting'},
  stalled: {icon: '⚠', label: 'Stalled'},
  reconciling: {icon: '↻', label: 'Reconciling'},
  suspended: {icon: '‖', label: 'Suspended'},
  unknown: {icon: '?', label: 'Unknown'},
};

export const states = Object.keys(stateInfo);

// The kstatus words of the objects in an inventory tree (not toolkit
// objects), each drawn in the colours of the nearest state.
const liveInfo = {
  current: {icon: '✔', label: 'Current', look: 'ready'},
  inprogress: {icon: '↻', label: 'In progress', look: 'reconciling'},
  terminating: {icon: '↻', label: 'Terminating', look: 'reconciling'},
  failed: {icon: '✖', label: 'Failed', look: 'failing'},
  notfound: {icon: '✖', label: 'Not found', look: 'failing'},
};

// badge is the state pill: icon (hidden from screen readers) and label.
export function badge(state) {
  const info = stateInfo[state] || liveInfo[state] || stateInfo.unknown;
  const look = state in stateInfo ? state : liveInfo[state]?.look || 'unknown';
  return h('span', {class: `badge state-${look}`, dataset: {testid: 'state', state}},
    h('span', {'aria-hidden': 'true', class: 'icon'}, info.icon), ' ', info.label);
}

// setBadge updates a badge in place.
export function setBadge(el, state) {
  el.replaceWith(badge(state));
}

export function refId(r) {
  return `${r.kind}/${r.namespace}/${r.name}`;
}

export function objectPath(r) {
  return `/objects/${encodeURIComponent(r.kind)}/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`;
}

export function objectLink(r, text) {
  return h('a', {href: objectPath(r), 'data-link': true}, text ?? `${r.kind}/${r.namespace}/${r.name}`);
}

// time renders an RFC 3339 time as a <time> with the local rendering.
// time shows when, as an age ("3m ago"), the date and time in its
// title (a tooltip, and what a screen reader can ask for).
export function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return h('time', {datetime: iso, title: d.toLocaleString()}, age(d));
}

// Ages and next runs on the page move on by themselves, every 15 s.
if (typeof document !== 'undefined') {
  setInterval(() => {
    for (const el of document.querySelectorAll('time[datetime]')) el.textContent = age(new Date(el.dateTime));
    for (const el of document.querySelectorAll('[data-next-run]')) {
      el.textContent = nextRun({lastRun: el.dataset.lastRun, interval: Number(el.dataset.interval)}).text;
    }
  }, 15000);
}

// nextRun is when an object's controller runs it next: its last run plus
// whole intervals, the first still ahead (a guess: a run requested by
// hand or a change of the object comes sooner). text is "next run in 4m",
// "suspended" or "" when the object has no interval.
export function nextRun(o, now = Date.now()) {
  if (o.suspended) return {at: null, text: 'suspended'};
  const last = new Date(o.lastRun || '').getTime();
  const every = (o.interval || 0) * 1000;
  if (Number.isNaN(last) || !every) return {at: null, text: ''};
  let at = last + every;
  if (at <= now) at += Math.ceil((now - at) / every) * every;
  if (at - now < 5000) return {at: new Date(at), text: 'next run due now'};
  return {at: new Date(at), text: `next run ${age(new Date(at), now)}`};
}

// nextRunLabel is nextRun as an element that moves on by itself.
export function nextRunLabel(o) {
  const n = nextRun(o);
  if (o.suspended || !n.at) return h('span', {'data-testid': 'next-run'}, n.text);
  return h('span', {'data-testid': 'next-run', title: n.at.toLocaleString(),
    dataset: {nextRun: '', lastRun: o.lastRun, interval: String(o.interval)}}, n.text);
}

// age is how long ago d was, in its largest unit: "just now", "42s ago",
// "3m ago", "5h ago", "2d ago" ("in 3m" for a time ahead).
export function age(d, now = Date.now()) {
  const ms = now - d.getTime();
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 5) return 'just now';
  let text = `${s}s`;
  if (s >= 86400) text = `${Math.floor(s / 86400)}d`;
  else if (s >= 3600) text = `${Math.floor(s / 3600)}h`;
  else if (s >= 60) text = `${Math.floor(s / 60)}m`;
  return ms >= 0 ? `${text} ago` : `in ${text}`;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// debounce runs fn at most once per wait ms, after the last call.
export function debounce(fn, wait) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
}

export const kinds = ['Kustomization', 'HelmRelease', 'GitRepository', 'OCIRepository', 'Bucket', 'HelmRepository',
  'HelmChart', 'ExternalArtifact', 'ArtifactGenerator', 'ImageRepository', 'ImagePolicy', 'ImageUpdateAutomation',
  'Receiver', 'Alert', 'Provider'];

// shortRevision keeps the branch and 12 hex digits of a digest.
export function shortRevision(rev) {
  if (!rev) return 'no revision';
  return rev.replace(/(sha1|sha256):([0-9a-f]{12})[0-9a-f]*/g, '$1:$2');
}
