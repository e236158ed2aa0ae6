// Actions on one object or a selection: reconcile, reconcile with source,
// suspend (asks for a reason) and resume.
import {act} from './api.js';
import {refId} from './dom.js';

export const actionLabels = {
  'reconcile': 'Reconcile',
  'reconcile-source': 'Reconcile with source',
  'suspend': 'Suspend',
  'resume': 'Resume',
};

// askReason opens the reason dialog; resolves to the reason, or null when
// cancelled.
export function askReason(targets) {
  const dialog = document.getElementById('reason-dialog');
  const input = document.getElementById('reason-input');
  document.getElementById('reason-targets').textContent =
    targets.length === 1 ? `Suspend ${refId(targets[0])}.` : `Suspend ${targets.length} objects.`;
  input.value = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok' ? input.value.trim() : null);
    }, {once: true});
    dialog.returnValue = '';
    dialog.showModal();
    input.focus();
  });
}

// run performs action on targets, asking for a reason first when suspending,
// and writes the outcome into the status element. Returns the results, or
// null when cancelled.
export async function run(action, targets, statusEl) {
  let reason = '';
  if (action === 'suspend') {
    reason = await askReason(targets);
    if (reason === null) return null;
  }
  statusEl.dataset.state = 'pending';
  statusEl.textContent = `${actionLabels[action]}: sending…`;
  try {
    const {results} = await act(action, targets, reason);
    const failed = results.filter((r) => !r.ok);
    statusEl.dataset.state = failed.length ? 'error' : 'ok';
    statusEl.textContent = failed.length
      ? `${actionLabels[action]} failed for ${failed.map((r) => `${refId(r.ref)}: ${r.error}`).join('; ')}`
      : `${actionLabels[action]} requested for ${results.length === 1 ? refId(results[0].ref) : `${results.length} objects`}.`;
    return results;
  } catch (err) {
    statusEl.dataset.state = 'error';
    statusEl.textContent = `${actionLabels[action]} failed: ${err.message}`;
    return null;
  }
}
