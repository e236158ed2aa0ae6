// The login page of cluster mode: a Kubernetes bearer token, checked by the
// server with a TokenReview and never kept by the page. In local mode the
// server's message says to open the URL `weir ui` printed instead.
import {login} from './api.js';
import {h} from './dom.js';

export function loginView(main, message, done, mode) {
  if (mode === 'local') {
    // Local mode logs in only through the link weir ui printed: a token
    // form could never work here.
    main.replaceChildren(h('h1', {}, 'Log in'), h('p', {id: 'login-message'}, message));
    main.dataset.loaded = 'login';
    return;
  }
  const input = h('input', {id: 'login-token', name: 'token', type: 'password', autocomplete: 'off', required: true});
  const status = h('p', {id: 'login-status', class: 'action-status', role: 'status'});
  const form = h('form', {id: 'login-form', class: 'login'},
    h('label', {for: 'login-token'}, 'Kubernetes bearer token'), input,
    h('button', {type: 'submit', id: 'login-submit'}, 'Log in'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.dataset.state = 'pending';
    status.textContent = 'Checking the token…';
    try {
      await login(input.value.trim());
      input.value = '';
      done();
    } catch (err) {
      status.dataset.state = 'error';
      status.textContent = err.message;
    }
  });
  main.replaceChildren(h('h1', {}, 'Log in'), h('p', {id: 'login-message'}, message), form, status);
  main.dataset.loaded = 'login';
  input.focus();
}
