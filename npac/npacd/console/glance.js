// "At a glance", the top of the overview: what an on-call person looks at first.
//
//   Nothing up        enabled providers with no association up (states.js: congested,
//                     silent and recovering ones are up), most messages queued first:
//                     nothing can carry their messages
//   Waiting longest   the providers whose oldest queued message has waited longest, with
//                     the first reason it waits (docs/OPERATIONS.md "Why a message waits")
//   Storage           npacd's readiness (GET /ready, docs/API.md): whether the database
//                     takes writes, and any other reason npacd is not ready
//
// Each box is red while something needs a person, green when all is well.

import { h, replaceKeepingFocus, age } from './dom.js';
import { state } from './app.js';
import { upCount } from './providers.js';
import { providerHref } from './router.js';

const kLongest = 5;
// Red from the age at which docs/OPERATIONS.md's example alert NpacdMessagesWaiting fires.
const kStuckMs = 300 * 1000;

// GET /ready answers text: "ready", or "not ready:" and one line per failing condition.
export async function pollReady() {
  try {
    const response = await fetch('/ready', { cache: 'no-store' });
    const text = await response.text();
    const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && l !== 'ready' && l !== 'not ready:');
    state.ready = { ok: response.ok, lines };
  } catch (e) {
    state.ready = { ok: false, lines: [`npacd did not answer GET /ready: ${e.message}`] };
  }
}

// One box; `tone` 'ok' (green), 'bad' (red) or 'neutral'.
function box(title, tone, key, ...content) {
  return h('section', { class: `glance-box ${tone}`, 'aria-labelledby': `glance-${key}`, dataset: { glance: key } },
    h('h3', { id: `glance-${key}` }, title), ...content);
}

function providerLink(p) {
  return h('a', { href: providerHref(p.spid) }, `${p.spid} ${p.name}`);
}

function nothingUp() {
  const enabled = state.providers.filter((p) => p.enabled);
  const down = enabled.filter((p) => upCount(p.spid) === 0)
    .map((p) => ({ p, queued: state.queues.get(p.spid)?.totals?.queued ?? 0 }))
    .sort((a, b) => b.queued - a.queued || a.p.spid.localeCompare(b.p.spid));
  const disabled = state.providers.length - enabled.length;
  const note = disabled ? h('p', { class: 'muted' }, `${disabled} disabled provider(s) not counted.`) : null;
  if (down.length === 0) {
    return box('Nothing up', 'ok', 'down',
      h('p', {}, enabled.length ? `Every enabled provider has an association up (${enabled.length}).` : 'No enabled provider.'), note);
  }
  return box(`Nothing up: ${down.length} provider(s)`, 'bad', 'down',
    h('ul', {}, down.slice(0, 8).map(({ p, queued }) => h('li', {}, providerLink(p), ` — ${queued} queued`))),
    down.length > 8 ? h('p', {}, `and ${down.length - 8} more (the providers table below lists them all).`) : null,
    note);
}

function waitingLongest() {
  const waiting = state.providers
    .map((p) => ({ p, q: state.queues.get(p.spid) }))
    .filter(({ q }) => q && (q.totals?.queued ?? 0) > 0 && q.oldest_queued_age_ms !== null && q.oldest_queued_age_ms !== undefined)
    .sort((a, b) => b.q.oldest_queued_age_ms - a.q.oldest_queued_age_ms);
  if (waiting.length === 0) return box('Waiting longest', 'ok', 'waiting', h('p', {}, 'No message is queued.'));
  const stuck = waiting[0].q.oldest_queued_age_ms > kStuckMs;
  return box('Waiting longest', stuck ? 'bad' : 'neutral', 'waiting',
    h('ol', {}, waiting.slice(0, kLongest).map(({ p, q }) => {
      const why = (q.waits ?? []).find((w) => w.reason);
      return h('li', {}, providerLink(p), ` — ${age(q.oldest_queued_age_ms)}, ${q.totals.queued} queued`,
        why ? [', ', h('span', { class: 'reasons' }, `${why.function}: ${why.reason}`)] : '');
    })));
}

function storage() {
  const ready = state.ready;
  if (!ready) return box('Storage', 'neutral', 'storage', h('p', { class: 'muted' }, 'Not read yet.'));
  const database = ready.lines.filter((l) => l.startsWith('database'));
  const other = ready.lines.filter((l) => !l.startsWith('database'));
  const writable = database.length === 0 && !state.providers.some((p) => state.queues.get(p.spid)?.storage_ok === false);
  return box('Storage', writable && ready.ok ? 'ok' : 'bad', 'storage',
    h('p', {}, writable ? 'The database takes writes.' : h('strong', {}, 'The database does NOT take writes.')),
    database.map((l) => h('p', { class: 'error-text' }, l)),
    other.length ? [h('p', {}, 'npacd is not ready:'), h('ul', {}, other.map((l) => h('li', {}, l)))] : null);
}

export function renderGlance() {
  replaceKeepingFocus(document.getElementById('glance'), nothingUp(), waitingLongest(), storage());
}
