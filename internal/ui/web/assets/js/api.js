// The JSON API of internal/ui/server.

let csrfToken = '';

// APIError keeps the HTTP status beside the server's message.
export class APIError extends Error {
  constructor(status, message, mode) {
    super(message);
    this.status = status;
    // mode is the server's (local or cluster), sent with a 401.
    this.mode = mode || '';
  }
}

async function decode(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch {
    body = null;
  }
  if (!resp.ok) {
    throw new APIError(resp.status, (body && body.error) || `${resp.status} ${resp.statusText}`, body && body.mode);
  }
  return body;
}

export async function get(path) {
  const resp = await fetch(path, {headers: {Accept: 'application/json'}, credentials: 'same-origin'});
  return decode(resp);
}

export async function whoami() {
  const w = await get('/api/whoami');
  csrfToken = w.csrfToken || '';
  return w;
}

// query turns a filter object into a query string, empty values left out.
export function query(filters) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

// act posts an action for targets and returns the server's results.
export async function act(action, targets, reason) {
  const resp = await fetch('/api/actions', {
    method: 'POST',
    credentials: 'same-origin',
    headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken, Accept: 'application/json'},
    body: JSON.stringify({action, reason: reason || '', targets}),
  });
  return decode(resp);
}

// login opens a session for a bearer token (cluster mode).
export async function login(token) {
  const resp = await fetch('/api/login', {
    method: 'POST',
    credentials: 'same-origin',
    headers: {'Content-Type': 'application/json', Accept: 'application/json'},
    body: JSON.stringify({token}),
  });
  return decode(resp);
}
