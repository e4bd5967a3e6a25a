// npacd's operator console (served by npacd at /console/, docs/OPERATIONS.md "The
// console"): sign-in with an API token, then one view at a time, each with a URL of its
// own (router.js) — the overview (at a glance, then the providers), one provider, the
// audit log, the association log, the egress throttle groups — kept live by GET
// /v1/events, or by polling when npacd answers no event stream. Plain ES modules, no build
// step and no library; the page's event loop is its only thread, and a sign-out bumps
// `generation` so the loops of the old session stop.

import { session, get, readEvents, ApiError } from './api.js';
import { state, onChange, changed, showError, clearError, announce, kReadOnlyNote } from './app.js';
import { renderProviders, pollQueues, pollPolicies } from './providers.js';
import { renderProvider, refreshProvider, refreshEgress } from './provider.js';
import { renderGlance, pollReady } from './glance.js';
import { setUpLogs, refreshAudit, refreshAssociationLog } from './logs.js';
import { renderThrottleGroups, refreshThrottleGroups, forgetThrottleGroups } from './throttle_groups.js';
import { route, onRoute } from './router.js';

const kQueuePollMs = 3000;
const kDetailPollMs = 10000;
const kFallbackPollMs = 2000;
const kStreamRetryMs = 30000;
let generation = 0;
let timers = [];

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Who the token is (GET /v1/whoami: its name and role). npacd serves this page and that
// route from the same binary, so an npacd that serves the page answers it.
function whoAmI(token) {
  return get('/v1/whoami', token);
}

function setLive(mode) {
  state.live = mode;
  const text = { stream: 'live (event stream)', polling: 'live (polling every 2 s: npacd answers no event stream)',
    reconnecting: 'reconnecting…', off: 'not connected' }[mode];
  $('live-status').textContent = text;
  $('live-status').className = `live ${mode}`;
}

function applyProviders(body) {
  const before = state.providers.map((p) => p.spid).join(',');
  state.providers = body.providers ?? [];
  state.providersRead = true;
  if (state.providers.map((p) => p.spid).join(',') !== before) pollPolicies();
}

let queueSoon = null;
let associationIds = '';
function applyAssociations(body) {
  state.associations = body.associations ?? [];
  // Associations came, went or sent: the wait reasons and the picks may have changed too;
  // when one came or went, the association log has a new row.
  const ids = state.associations.map((a) => a.id).join(',');
  const cameOrWent = ids !== associationIds;
  associationIds = ids;
  clearTimeout(queueSoon);
  queueSoon = setTimeout(async () => {
    await Promise.all([pollQueues(), refreshEgress(), cameOrWent ? refreshProvider() : null]);
    if (cameOrWent) refreshAssociationLog();
    changed();
  }, 300);
}

async function pollOnce() {
  const [a, p] = await Promise.all([get('/v1/associations'), get('/v1/providers')]);
  applyAssociations(a);
  applyProviders(p);
  changed();
}

// The live loop: the event stream while npacd answers it, else polling; a stream that
// breaks is retried after a poll. `event: end` comes when the token is revoked (then the
// next call is refused 401 and the page signs out with npacd's reason) or when npacd
// stops (then the page reconnects).
async function live(gen) {
  while (gen === generation) {
    const abort = new AbortController();
    state.abortStream = abort;
    let result;
    let ended = null;
    try {
      result = await readEvents('/v1/events', (type, data) => {
        if (gen !== generation) return;
        if (type === 'end') {
          ended = data;
          try { ended = JSON.parse(data).reason ?? data; } catch { /* plain text */ }
          return;
        }
        let body;
        try { body = JSON.parse(data); } catch { return; }
        // An event carries the body GET would answer, an {"error":…} one included.
        if (body.error) {
          showError(`live ${type}: ${body.error.message}`);
          return;
        }
        if (type === 'associations') applyAssociations(body);
        else if (type === 'providers') applyProviders(body);
        if (state.live !== 'stream') setLive('stream');
        changed();
      }, abort.signal);
    } catch (e) {
      if (gen !== generation) return;
      result = { streamed: true, error: e };
    }
    if (gen !== generation) return;
    if (result.status === 401) {
      signOut('npacd refused the token (401): sign in again.');
      return;
    }
    if (ended !== null) {
      try {
        await whoAmI(session.token);
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          signOut(`npacd ended the session: ${ended}`);
          return;
        }
      }
      if (gen !== generation) return;
      showError(`npacd ended the live view: ${ended}; reconnecting.`);
    }
    const until = Date.now() + (result.streamed ? kFallbackPollMs : kStreamRetryMs);
    setLive(result.streamed ? 'reconnecting' : 'polling');
    while (gen === generation && Date.now() < until) {
      try { await pollOnce(); } catch (e) {
        if (e instanceof ApiError && e.status === 401) { signOut(e.message); return; }
        showError(e.message);
      }
      await sleep(kFallbackPollMs);
    }
  }
}

function every(ms, fn) {
  const gen = generation;
  const id = setInterval(() => { if (gen === generation) fn(); }, ms);
  timers.push(id);
}

const kTitles = { overview: 'Overview', audit: 'Audit log', 'association-log': 'Association log', 'throttle-groups': 'Throttle groups' };
const kFocus = { overview: 'glance-title', provider: 'provider-title', audit: 'audit-title', 'association-log': 'association-log-title',
  'throttle-groups': 'throttle-groups-title' };

// Shows the view the URL names: only its section is rendered and shown; the keyboard
// focus moves to its heading when the person moved (not at the page's first load).
async function show(where, { initial }) {
  for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== where.view;
  for (const link of document.querySelectorAll('nav a[data-view]')) {
    if (link.dataset.view === where.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (where.view !== 'provider') document.title = `${kTitles[where.view]} — npacd console`;
  state.selected = where.view === 'provider' ? where.spid : null;
  if (where.view === 'association-log' && where.spid !== undefined) {
    $('alog-spid').value = where.spid ?? '';
    if (state.who) refreshAssociationLog();
  }
  changed();
  if (!initial) $(kFocus[where.view])?.focus();
  if (state.who && where.view === 'provider') {
    await refreshProvider();
    changed();
  }
  if (state.who && where.view === 'throttle-groups') {
    await refreshThrottleGroups();
    changed();
  }
}

// The throttle groups, read while their view is open (each node reports a few times a
// second; the view shows their shares as of the last read).
async function pollThrottleGroups() {
  if (route().view !== 'throttle-groups') return;
  await refreshThrottleGroups();
  changed();
}

// Renders the view in force and empties the other data views, so that a hidden view
// holds no stale copy of a switch or a figure.
function render() {
  const view = route().view;
  if (view === 'overview') {
    renderGlance();
    renderProviders();
  } else {
    $('glance').replaceChildren();
    $('providers-table').replaceChildren();
  }
  if (view === 'throttle-groups') renderThrottleGroups();
  else $('throttle-groups-body').replaceChildren();
  renderProvider();
}

async function start(who) {
  generation += 1;
  const gen = generation;
  state.who = who;
  $('sign-in').hidden = true;
  $('app').hidden = false;
  $('sign-out').hidden = false;
  $('who').textContent = `Signed in as ${who.name} (${who.role})`;
  $(kReadOnlyNote).hidden = who.role === 'operator';
  $(kReadOnlyNote).textContent = who.role === 'operator' ? '' :
    `The ${who.role} role cannot change anything: the switches are disabled and npacd would refuse them (403).`;
  setLive('reconnecting');
  try { await pollOnce(); } catch (e) { showError(e.message); }
  await Promise.all([pollQueues(), pollReady()]);
  live(gen);
  if (route().view === 'provider') refreshProvider().then(changed);
  pollThrottleGroups();
  refreshAudit();
  refreshAssociationLog();
  every(kQueuePollMs, pollQueues);
  every(kQueuePollMs, async () => { await pollReady(); changed(); });
  every(kQueuePollMs, pollThrottleGroups);
  every(kDetailPollMs, async () => { await refreshProvider(); changed(); });
  every(kDetailPollMs, refreshAudit);
  every(kDetailPollMs, refreshAssociationLog);
  every(60000, pollPolicies);
  announce(`Signed in as ${who.name}`);
}

function signOut(reason) {
  generation += 1;
  state.abortStream?.abort();
  for (const id of timers) clearInterval(id);
  timers = [];
  session.token = null;
  Object.assign(state, { who: null, providers: [], providersRead: false, associations: [], ready: null });
  state.queues.clear();
  state.policies.clear();
  state.history.clear();
  forgetThrottleGroups();
  setLive('off');
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
  $('who').textContent = '';
  clearError();
  $('sign-in-error').textContent = reason ?? '';
  $('token').focus();
}

async function signIn(event) {
  event.preventDefault();
  const token = $('token').value.trim();
  $('sign-in-error').textContent = '';
  if (!token) {
    $('sign-in-error').textContent = 'Give an API token (npac_ and 64 hex digits).';
    return;
  }
  try {
    const who = await whoAmI(token);
    session.token = token;
    $('token').value = '';
    await start(who);
  } catch (e) {
    $('sign-in-error').textContent = `Sign-in refused: ${e.message}`;
    $('token').focus();
  }
}

function boot() {
  onChange(render);
  setUpLogs();
  // The skip link moves the focus without changing the URL's view.
  document.querySelector('.skip').addEventListener('click', (event) => {
    event.preventDefault();
    $('main').focus();
  });
  onRoute(show);
  $('sign-in-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', () => signOut('Signed out.'));
  $('alert-close').addEventListener('click', clearError);
  document.addEventListener('npacd:changed', () => {
    refreshAudit();
    pollQueues();
    refreshProvider().then(changed);
  });
  setLive('off');
  const token = session.token;
  if (!token) {
    $('token').focus();
    return;
  }
  whoAmI(token).then(start, (e) => signOut(`The saved token is refused: ${e.message}`));
}

boot();
