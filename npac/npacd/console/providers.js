// The providers table: one row per provisioned provider with its live state (associations
// up from the event stream, queue and wait reasons from GET /v1/providers/{spid}/queue,
// egress policy from its tunable) and the operator's enable/disable and SRR switches,
// which the provider's own view shows too.

import { h, replaceKeepingFocus, table, yesNo, orDash, age } from './dom.js';
import { state, canOperate, confirmDialog, change, changed, kReadOnlyNote } from './app.js';
import { get } from './api.js';
import { providerHref } from './router.js';
import { isUp, stateBadge, stateCounts } from './states.js';

// NANC 353: what turning SRR on or off does to a provider's live associations
// (docs/OPERATIONS.md, the SRR table).
const kSrrOff = 'Turning SRR off keeps the earliest association and releases the others ' +
  'after their messages move. The provider is then served over one association (NANC 353).';
const kSrrOn = 'Turning SRR on lets the provider bind several associations with the same ' +
  'function mask from different NSAPs, served as one logical association in round robin (NANC 353).';
const kDisable = 'Disabling keeps the provisioning and the queue, refuses new binds and releases ' +
  'the live associations once their outstanding requests are answered; what they had not ' +
  'delivered stays queued.';

export function associationsOf(spid) {
  return state.associations.filter((a) => a.spid === spid);
}

// How many of the provider's live associations are up (states.js: congested, silent and
// recovering ones count; releasing ones do not).
export function upCount(spid) {
  return associationsOf(spid).filter(isUp).length;
}

// "3" and, beside it, how many are in a state other than plain bound: "3 congested".
export function upCell(spid) {
  const notBound = stateCounts(associationsOf(spid)).filter(([s]) => s !== 'bound');
  return h('span', { class: 'up' },
    h('span', { class: 'up-count', dataset: { up: spid } }, String(upCount(spid))),
    notBound.map(([s, n]) => [' ', stateBadge(s, `${n} ${s}`)]));
}

export function waitText(queue) {
  if (!queue) return '—';
  if (!queue.waits || queue.waits.length === 0) return 'none';
  return queue.waits.map((w) => `${w.function}: ${w.reason ?? 'next delivery round'} (${w.queued})`).join('; ');
}

export function mutating(label, key, onClick, text) {
  const operate = canOperate();
  return h('button', {
    type: 'button', class: 'small', 'aria-label': label, dataset: { key },
    disabled: !operate, 'aria-describedby': operate ? null : kReadOnlyNote, onclick: onClick,
  }, text);
}

export async function toggleSrr(provider) {
  const on = !provider.srr;
  const ok = await confirmDialog({
    title: `Turn SRR ${on ? 'on' : 'off'} for ${provider.spid} (${provider.name})?`,
    text: on ? kSrrOn : kSrrOff,
    confirm: `Turn SRR ${on ? 'on' : 'off'}`,
  });
  if (!ok) return;
  await change('PUT', `/v1/providers/${encodeURIComponent(provider.spid)}/srr`, { on },
    `SRR is ${on ? 'on' : 'off'} for ${provider.spid}`, async (answer) => {
      const p = state.providers.find((x) => x.spid === provider.spid);
      if (p) p.srr = answer.srr;
    });
}

export async function toggleEnabled(provider) {
  const enable = !provider.enabled;
  if (!enable) {
    const ok = await confirmDialog({ title: `Disable ${provider.spid} (${provider.name})?`, text: kDisable, confirm: 'Disable' });
    if (!ok) return;
  }
  await change('POST', `/v1/providers/${encodeURIComponent(provider.spid)}/${enable ? 'enable' : 'disable'}`, undefined,
    `${provider.spid} is ${enable ? 'enabled' : 'disabled'}`, async (answer) => {
      const p = state.providers.find((x) => x.spid === provider.spid);
      if (p) p.enabled = answer.enabled;
    });
}

// Disable/Enable and SRR on/off for provider `p`, each behind its confirmation.
export function providerActions(p) {
  return h('span', { class: 'actions' },
    mutating(`${p.enabled ? 'Disable' : 'Enable'} ${p.spid}`, `enable-${p.spid}`, () => toggleEnabled(p),
      p.enabled ? 'Disable' : 'Enable'),
    mutating(`Turn SRR ${p.srr ? 'off' : 'on'} for ${p.spid}`, `srr-${p.spid}`, () => toggleSrr(p),
      `SRR ${p.srr ? 'off' : 'on'}`));
}

export function renderProviders() {
  const rows = state.providers.map((p) => {
    const queue = state.queues.get(p.spid);
    return [
      h('a', { href: providerHref(p.spid), 'aria-label': `Show provider ${p.spid}`, dataset: { key: `show-${p.spid}` } }, p.spid),
      p.name,
      p.system_type,
      yesNo(p.enabled),
      h('span', { dataset: { srr: p.spid } }, p.srr ? 'on' : 'off'),
      orDash(state.policies.get(p.spid)),
      upCell(p.spid),
      queue ? String(queue.totals?.queued ?? 0) : '—',
      queue ? age(queue.oldest_queued_age_ms) : '—',
      h('span', { class: 'reasons', dataset: { waits: p.spid } }, waitText(queue)),
      providerActions(p),
    ];
  });
  replaceKeepingFocus(document.getElementById('providers-table'),
    table('Providers: live associations, queue and why messages wait',
      ['SPID', 'Name', 'Type', 'Enabled', 'SRR', 'Egress policy', 'Associations up', 'Queued',
        'Oldest waiting', 'Wait reasons', 'Actions'],
      rows, 'No provider is provisioned.', { className: 'fit' }));
}

// GET /v1/providers/{spid}/queue for every provider, a few at a time; then re-render.
export async function pollQueues() {
  const spids = state.providers.map((p) => p.spid);
  for (let i = 0; i < spids.length; i += 6) {
    await Promise.all(spids.slice(i, i + 6).map(async (spid) => {
      try {
        state.queues.set(spid, await get(`/v1/providers/${encodeURIComponent(spid)}/queue`));
      } catch {
        state.queues.delete(spid);
      }
    }));
  }
  recordHistory();
  changed();
}

export async function pollPolicies() {
  await Promise.all(state.providers.map(async (p) => {
    try {
      const t = await get(`/v1/tunables/egress_policy?spid=${encodeURIComponent(p.spid)}`);
      state.policies.set(p.spid, t.value);
    } catch {
      state.policies.delete(p.spid);
    }
  }));
  changed();
}

// One sample per provider for the pictures: queue depth and each association's `sent`.
const kHistoryMs = 10 * 60 * 1000;
export function recordHistory() {
  const now = Date.now();
  for (const p of state.providers) {
    const samples = state.history.get(p.spid) ?? [];
    const sent = {};
    for (const a of associationsOf(p.spid)) sent[a.id] = a.sent ?? 0;
    samples.push({ t: now, queued: state.queues.get(p.spid)?.totals?.queued ?? null, sent });
    while (samples.length && samples[0].t < now - kHistoryMs) samples.shift();
    state.history.set(p.spid, samples);
  }
}
