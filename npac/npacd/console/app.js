// The console's shared state and the few actions every view uses: the error banner, the
// confirmation dialog and changes made through the API. Single-threaded (the page's
// event loop): views read `state` and call `changed()` after a change to re-render.

import { call } from './api.js';

export const state = {
  who: null,             // {name, role} of the signed-in token (GET /v1/whoami)
  providers: [],         // GET /v1/providers "providers", kept live
  providersRead: false,  // the providers were read once (an unknown SPID can be told apart)
  associations: [],      // GET /v1/associations "associations", kept live
  queues: new Map(),     // spid → GET /v1/providers/{spid}/queue
  policies: new Map(),   // spid → egress_policy in force (GET /v1/tunables/egress_policy?spid=)
  selected: null,        // the SPID whose view is open (the URL's, router.js)
  ready: null,           // GET /ready: {ok, lines} (glance.js)
  history: new Map(),    // spid → [{t, queued, sent: {association id → sent}}], last minutes
  live: 'off',           // 'stream', 'polling', 'reconnecting' or 'off'
};

const renderers = [];
export function onChange(render) { renderers.push(render); }
export function changed() { for (const render of renderers) render(); }

export function canOperate() { return state.who?.role === 'operator'; }

// Why a control is disabled, for its accessible description.
export const kReadOnlyNote = 'read-only-note';

export function showError(message) {
  const box = document.getElementById('alert');
  document.getElementById('alert-text').textContent = message;
  box.hidden = false;
}

export function clearError() {
  document.getElementById('alert').hidden = true;
  document.getElementById('alert-text').textContent = '';
}

export function announce(message) {
  document.getElementById('announce').textContent = message;
}

// A modal confirmation (HTML <dialog>: Escape cancels, focus stays inside while open).
// Focus starts on Cancel, the safe choice, and returns to the control that opened it.
export function confirmDialog({ title, text, confirm }) {
  const dialog = document.getElementById('confirm');
  const ok = document.getElementById('confirm-ok');
  const cancel = document.getElementById('confirm-cancel');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  ok.textContent = confirm;
  // A live update may have rebuilt the opener meanwhile: find it again by its data-key.
  const opener = document.activeElement;
  const key = opener?.dataset?.key;
  return new Promise((resolve) => {
    const done = (answer) => {
      ok.removeEventListener('click', onOk);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      const again = opener?.isConnected ? opener : key && document.querySelector(`[data-key="${CSS.escape(key)}"]`);
      if (again) again.focus();
      resolve(answer);
    };
    const onOk = () => done(true);
    const onCancel = () => done(false);
    const onClose = () => done(false);
    ok.addEventListener('click', onOk);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
    cancel.focus();
  });
}

// A change through the API: shows npacd's refusal (403 for a reader, a 400 with the
// reason…) in the error banner, never hides it. `after` runs when it succeeded.
export async function change(method, path, body, done, after) {
  clearError();
  try {
    const answer = await call(method, path, body);
    announce(done);
    if (after) await after(answer);
    return answer;
  } catch (e) {
    showError(e.message);
    return null;
  } finally {
    changed();
    // The audit log (a refusal is audited too), the queue and the provider's view read
    // the change back.
    document.dispatchEvent(new CustomEvent('npacd:changed'));
  }
}
