// One provider's view (#/providers/{spid}, router.js): first what it is doing — its
// facts and switches, then its live associations with Abort (associations.js) — then the
// pictures that apply to its policy, its queue, NSAPs, keys, tunables with where each
// value comes from, and its recent association log. What does not apply is left out
// rather than shown as an empty box. The parts read once per refresh live in `detail`.

import { h, replaceKeepingFocus, table, yesNo, orDash, age, timeCell } from './dom.js';
import { state } from './app.js';
import { get, ApiError } from './api.js';
import { associationsOf, upCell, waitText, providerActions } from './providers.js';
import { associationsTable } from './associations.js';
import { associationLogHref, throttleGroupHref } from './router.js';
import { roundRobinPicture, linePicture, weightedPicture, lrtmPicture, historySeries } from './charts.js';

const detail = { spid: null, provider: null, tunables: null, log: null, egress: null, egressMissing: false };

// Where a tunable's effective value comes from (GET /v1/tunables?spid= lists the
// overrides): the provider's own override, a global one (spid ""), else the default.
export function tunableSource(name, spid, overrides) {
  if (overrides.some((o) => o.name === name && o.spid === spid)) return 'provider';
  if (overrides.some((o) => o.name === name && (o.spid === '' || o.spid === null || o.spid === undefined))) return 'global';
  return 'default';
}

export async function refreshProvider() {
  const spid = state.selected;
  if (!spid) return;
  const path = encodeURIComponent(spid);
  const [provider, tunables, log] = await Promise.all([
    get(`/v1/providers/${path}`).catch((e) => ({ error: e.message })),
    get(`/v1/tunables?spid=${path}`).catch((e) => ({ error: e.message })),
    get(`/v1/association-log?spid=${path}&limit=20`).catch((e) => ({ error: e.message })),
  ]);
  if (state.selected !== spid) return;
  if (detail.spid !== spid) detail.egress = null;
  Object.assign(detail, { spid, provider, tunables, log });
  await refreshEgress();
}

// The round robin's last picks (GET /v1/providers/{spid}/egress), read again whenever the
// associations' counters move. That route comes with the associations' dispatch fields
// (weight, lrtm…): an npacd without them is not asked.
export async function refreshEgress() {
  const spid = state.selected;
  if (!spid || detail.egressMissing) return;
  if (!associationsOf(spid).some((a) => 'weight' in a || 'lrtm' in a)) return;
  let egress;
  try {
    egress = await get(`/v1/providers/${encodeURIComponent(spid)}/egress`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && e.code === 'unknown_route') detail.egressMissing = true;
    egress = { error: e.message };
  }
  if (state.selected === spid && detail.spid === spid) detail.egress = egress;
}

// The egress policy in force: the tunable's value (providers.js pollPolicies), else what
// the egress route answered.
function policyOf(spid) {
  return state.policies.get(spid) ?? (detail.spid === spid && detail.egress && !detail.egress.error ? detail.egress.policy : undefined);
}

function figure(caption, svg) {
  return h('figure', {}, svg, h('figcaption', {}, caption));
}

// The pictures that apply: the last picks once a PDU went, the queue depth and rate once
// sampled, and the weighted or LRTM figures only under that policy.
function pictures(spid, policy) {
  const { queued, rate } = historySeries(state.history.get(spid) ?? []);
  const assocs = associationsOf(spid);
  const egress = detail.spid === spid ? detail.egress : null;
  const shown = [];
  if (egress?.error) shown.push(h('p', { class: 'error-text' }, `The last picks: ${egress.error}`));
  const rr = egress && !egress.error ? roundRobinPicture(egress) : null;
  if (rr) shown.push(figure(`${policy === 'round-robin' || !policy ? 'Round robin' : 'Picks'}: which association carried each of the last PDUs`, rr));
  const depth = linePicture(queued, 'Queue depth', 'messages');
  if (depth) shown.push(figure('Queue depth (messages queued)', depth));
  // The rate only once an association was there to send (a provider that never bound
  // would draw a flat zero).
  const samples = state.history.get(spid) ?? [];
  const pdus = samples.some((x) => Object.keys(x.sent).length > 0) ? linePicture(rate, 'PDUs sent per second', 'PDU/s') : null;
  if (pdus) shown.push(figure('PDUs sent per second', pdus));
  const weighted = policy === 'weighted' ? weightedPicture(assocs) : null;
  if (weighted) shown.push(figure('Weighted policy: load % against weight share', weighted));
  const lrtm = policy === 'lrtm' ? lrtmPicture(assocs) : null;
  if (lrtm) shown.push(figure('LRTM: N and Nw per association', lrtm));
  if (shown.length === 0) return null;
  return [h('h3', {}, 'Pictures'), h('div', { class: 'pictures' }, shown)];
}

// The provider's queue: the totals in one line, then the groups and the wait reasons
// when there are any.
function queuePart(spid) {
  const q = state.queues.get(spid);
  if (!q) return [h('h3', {}, 'Queue'), h('p', { class: 'empty' }, 'Queue not read yet.')];
  const t = q.totals ?? {};
  const throttled = q.throttle && q.throttle.level > 0;
  // The provisioned throttle group it is a member of (throttle_groups.js), at its level.
  const group = q.throttle?.group;
  return [
    h('h3', {}, 'Queue'),
    h('p', {}, `queued ${t.queued ?? 0}, sent ${t.sent ?? 0}, acknowledged ${t.acknowledged ?? 0}, failed ${t.failed ?? 0}` +
      (t.queued ? `; oldest queued ${age(q.oldest_queued_age_ms)}` : '') +
      (throttled ? `; throttle level ${q.throttle.level} ${q.throttle.detail ?? ''}` : ''),
    group ? ['; ', h('a', { href: throttleGroupHref(group), dataset: { throttleGroup: spid } },
      `throttle group ${group} (level ${q.throttle.group_level ?? 0})`)] : null),
    (q.waits ?? []).length === 0 ? null : table('Why queued messages wait', ['Function', 'Queued', 'Oldest waiting', 'Reason', 'Held by the core'],
      q.waits.map((w) => [w.function, String(w.queued), age(w.oldest_queued_age_ms),
        w.reason ?? 'nothing: the next delivery round places it', orDash(w.core_waiting)])),
    (q.counts ?? []).length === 0 ? null : table('Queue by state and function', ['State', 'Functions (mask)', 'Messages', 'Oldest'],
      q.counts.map((c) => [c.state, `${c.functions} (${c.function_mask})`, String(c.count), timeCell(c.oldest_created_at)])),
  ];
}

function errorOr(part, render) {
  if (!part) return h('p', { class: 'empty' }, 'Loading…');
  if (part.error) return h('p', { class: 'error-text' }, part.error);
  return render(part);
}

// The line under the title: enabled, SRR, policy, associations up, queue and why it
// waits, storage; then the provider's switches.
function facts(p, spid, policy) {
  const q = state.queues.get(spid);
  const item = (name, ...value) => h('div', {}, h('dt', {}, name), h('dd', {}, ...value));
  return h('div', { class: 'facts-bar' },
    h('dl', { class: 'facts' },
      item('Enabled', p ? yesNo(p.enabled) : '—'),
      item('SRR', h('span', { dataset: { srr: spid } }, p ? (p.srr ? 'on' : 'off') : '—')),
      item('Egress policy', orDash(policy)),
      item('Associations up', upCell(spid)),
      item('Queued', q ? String(q.totals?.queued ?? 0) : '—'),
      q?.totals?.queued ? item('Oldest waiting', age(q.oldest_queued_age_ms)) : null,
      item('Wait reasons', h('span', { class: 'reasons', dataset: { waits: spid } }, waitText(q))),
      q && q.storage_ok === false ? item('Storage', h('span', { class: 'error-text' }, 'NOT writable')) : null),
    p ? providerActions(p) : null);
}

function tunablesPart(spid, d) {
  const rows = (d.tunables ?? []).map((t) => ({ t, source: tunableSource(t.name, spid, d.overrides ?? []) }));
  const set = rows.filter((r) => r.source !== 'default').length;
  return h('details', { class: 'tunables' },
    h('summary', {}, `Tunables: ${set} of ${rows.length} set (for ${spid} or globally), the others at their default`),
    table(`Tunables as ${spid} sees them`, ['Name', 'Effective value', 'From', 'Default', 'Scope'],
      rows.map(({ t, source }) => [h('code', {}, t.name), String(t.value),
        h('span', { class: source === 'default' ? 'muted' : null, dataset: { source: t.name } }, source), String(t.default), t.scope])));
}

export function renderProvider() {
  const spid = state.selected;
  const body = document.getElementById('provider-body');
  if (!spid) {
    body.replaceChildren();
    return;
  }
  const p = state.providers.find((x) => x.spid === spid);
  const title = p ? `Provider ${spid}: ${p.name}` : `Provider ${spid}`;
  document.getElementById('provider-title').textContent = title;
  document.title = `${title} — npacd console`;
  if (!p && state.providersRead) {
    replaceKeepingFocus(body, h('p', { class: 'error-text' }, `No provider ${spid} is provisioned.`));
    return;
  }
  const policy = policyOf(spid);
  const same = detail.spid === spid;
  const provider = same ? detail.provider : null;
  replaceKeepingFocus(body,
    facts(p, spid, policy),
    h('h3', {}, 'Associations'), associationsTable(spid, policy),
    pictures(spid, policy),
    queuePart(spid),
    h('h3', {}, 'NSAPs'),
    errorOr(provider, (d) => ((d.nsaps ?? []).length === 0
      ? h('p', {}, 'No NSAP is provisioned: any NSAP may bind.')
      : table('NSAPs with their weights and relative costs', ['NSAP', 'Address', 'Weight', 'Relative cost'],
        d.nsaps.map((n) => [h('code', { class: 'nsap' }, n.nsap), orDash(n.address), orDash(n.weight), orDash(n.relative_cost)])))),
    h('h3', {}, 'Keys'),
    errorOr(provider, (d) => ((d.keys ?? []).length === 0
      ? h('p', {}, 'No key is provisioned.')
      : table('Keys', ['List / key', 'Algorithm', 'State', 'Valid from', 'Expires', 'Last sequence'],
        d.keys.map((k) => [`${k.key_list_id} / ${k.key_id}`, k.algorithm, k.state, timeCell(k.not_before),
          timeCell(k.not_after), orDash(k.last_sequence)])))),
    h('h3', {}, 'Tunables'),
    errorOr(same ? detail.tunables : null, (d) => tunablesPart(spid, d)),
    h('h3', {}, 'Recent association log'),
    errorOr(same ? detail.log : null, (d) => table(`The last ${(d.events ?? []).length} association events of ${spid}, newest first`,
      ['Time', 'Event', 'Association', 'NSAP', 'Functions', 'Reason'],
      (d.events ?? []).map((e) => [timeCell(e.at), e.event, orDash(e.association), h('code', { class: 'nsap' }, orDash(e.nsap)),
        orDash(e.functions), [e.reason, e.diagnostic ? ` (${e.diagnostic})` : '']]),
      'No association event yet.')),
    h('p', {}, h('a', { href: associationLogHref(spid) }, `Every association event of ${spid} in the association log`)));
}
