// One provider's view: its live associations (from the event stream, with the queue
// poll's congested/silent flags) and the abort button, the pictures, its queue by state
// and function, NSAPs, keys, tunables with where each value comes from, and its recent
// association log. The parts read once per refresh live in `detail`.

import { h, replaceKeepingFocus, table, yesNo, orDash, age, since, timeCell } from './dom.js';
import { state, canOperate, confirmDialog, change, kReadOnlyNote } from './app.js';
import { get, ApiError } from './api.js';
import { associationsOf } from './providers.js';
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

function abortButton(a) {
  const operate = canOperate();
  return h('button', {
    type: 'button', class: 'small danger', 'aria-label': `Abort association ${a.id}`, dataset: { key: `abort-${a.id}` },
    disabled: !operate, 'aria-describedby': operate ? null : kReadOnlyNote,
    onclick: async () => {
      const ok = await confirmDialog({
        title: `Abort association ${a.id} of ${a.spid}?`,
        text: `The association from ${a.peer} (NSAP ${a.nsap}) is aborted (ACSE A-ABORT); ` +
          'its in-flight messages move to the provider\'s other associations, or wait for its next bind.',
        confirm: 'Abort',
      });
      if (ok) await change('POST', `/v1/associations/${a.id}/abort`, undefined, `association ${a.id} aborted`);
    },
  }, 'Abort');
}

function associationsTable(spid) {
  const live = new Map((state.queues.get(spid)?.associations ?? []).map((x) => [x.id, x]));
  const rows = associationsOf(spid).map((a) => {
    const q = live.get(a.id);
    return [
      String(a.id), h('code', { class: 'nsap' }, a.nsap), a.peer, `${a.functions} (${a.function_mask})`, a.state,
      h('span', {}, timeCell(a.bound_at), ` (${since(a.bound_at)})`),
      String(a.outstanding ?? '—'), yesNo(q?.congested), yesNo(q?.silent), yesNo(a.recovery_mode),
      a.heartbeat_rtt_ms === undefined || a.heartbeat_rtt_ms === null ? '—' : `${Number(a.heartbeat_rtt_ms).toFixed(1)} ms`,
      `${a.sent ?? 0} / ${a.received ?? 0} / ${a.retransmissions ?? 0}`,
      orDash(a.weight), orDash(a.relative_cost),
      a.load_percent === undefined || a.load_percent === null ? '—' : `${Number(a.load_percent).toFixed(1)} %`,
      abortButton(a),
    ];
  });
  return table(`Associations of ${spid}, live`,
    ['ID', 'NSAP', 'Peer', 'Functions (mask)', 'State', 'Bound', 'Outstanding', 'Congested', 'Silent',
      'Recovering', 'Heartbeat RTT', 'Sent / received / retransmitted', 'Weight', 'Cost', 'Load', 'Action'],
    rows, 'No association is up.');
}

function figure(caption, svg, none) {
  return h('figure', {}, svg ?? h('p', { class: 'empty' }, none), h('figcaption', {}, caption));
}

function pictures(spid) {
  const { queued, rate } = historySeries(state.history.get(spid) ?? []);
  const assocs = associationsOf(spid);
  const egress = detail.egress;
  let rrNone = 'npacd does not report its picks (GET /v1/providers/{spid}/egress).';
  if (egress && egress.error) rrNone = egress.error;
  else if (egress) rrNone = 'No PDU has been sent yet.';
  return h('div', { class: 'pictures' },
    figure('Round robin: which association carried each of the last PDUs', egress && !egress.error ? roundRobinPicture(egress) : null, rrNone),
    figure('Queue depth (messages queued)', linePicture(queued, 'Queue depth', 'messages'), 'Collecting samples…'),
    figure('PDUs sent per second', linePicture(rate, 'PDUs sent per second', 'PDU/s'), 'Collecting samples…'),
    figure('Weighted policy: load % against weight share', weightedPicture(assocs), 'Not the weighted policy (no load %).'),
    figure('LRTM: N and Nw per association', lrtmPicture(assocs), 'Not the LRTM policy.'));
}

function queueTables(spid) {
  const q = state.queues.get(spid);
  if (!q) return h('p', { class: 'empty' }, 'Queue not read yet.');
  const t = q.totals ?? {};
  return h('div', {},
    h('p', {}, `queued ${t.queued ?? 0}, sent ${t.sent ?? 0}, acknowledged ${t.acknowledged ?? 0}, failed ${t.failed ?? 0}; ` +
      `oldest queued ${age(q.oldest_queued_age_ms)}; throttle level ${q.throttle?.level ?? '—'} ${q.throttle?.detail ?? ''}; ` +
      `storage ${q.storage_ok === null ? '—' : q.storage_ok ? 'ok' : 'NOT writable'}`),
    table('Queue by state and function', ['State', 'Functions (mask)', 'Messages', 'Oldest'],
      (q.counts ?? []).map((c) => [c.state, `${c.functions} (${c.function_mask})`, String(c.count), timeCell(c.oldest_created_at)]),
      'The queue holds nothing for this provider.'),
    table('Why queued messages wait', ['Function', 'Queued', 'Oldest waiting', 'Reason', 'Held by the core'],
      (q.waits ?? []).map((w) => [w.function, String(w.queued), age(w.oldest_queued_age_ms),
        w.reason ?? 'nothing: the next delivery round places it', orDash(w.core_waiting)]),
      'Nothing waits.'));
}

function errorOr(part, render) {
  if (!part) return h('p', { class: 'empty' }, 'Loading…');
  if (part.error) return h('p', { class: 'error-text' }, part.error);
  return render(part);
}

export function renderProvider() {
  const section = document.getElementById('provider');
  const spid = state.selected;
  section.hidden = !spid;
  if (!spid) return;
  const p = state.providers.find((x) => x.spid === spid);
  document.getElementById('provider-title').textContent = p ? `Provider ${spid}: ${p.name}` : `Provider ${spid}`;
  const same = detail.spid === spid;
  replaceKeepingFocus(document.getElementById('provider-body'),
    h('h3', {}, 'Associations'), associationsTable(spid),
    h('h3', {}, 'Pictures'), pictures(spid),
    h('h3', {}, 'Queue'), queueTables(spid),
    h('h3', {}, 'NSAPs'),
    errorOr(same ? detail.provider : null, (d) => table('NSAPs with their weights and relative costs',
      ['NSAP', 'Address', 'Weight', 'Relative cost'],
      (d.nsaps ?? []).map((n) => [h('code', { class: 'nsap' }, n.nsap), orDash(n.address), orDash(n.weight), orDash(n.relative_cost)]),
      'No NSAP is provisioned (any NSAP may bind).')),
    h('h3', {}, 'Keys'),
    errorOr(same ? detail.provider : null, (d) => table('Keys',
      ['List / key', 'Algorithm', 'State', 'Valid from', 'Expires', 'Last sequence'],
      (d.keys ?? []).map((k) => [`${k.key_list_id} / ${k.key_id}`, k.algorithm, k.state, timeCell(k.not_before),
        timeCell(k.not_after), orDash(k.last_sequence)]),
      'No key is provisioned.')),
    h('h3', {}, 'Tunables'),
    errorOr(same ? detail.tunables : null, (d) => table(`Tunables as ${spid} sees them`,
      ['Name', 'Effective value', 'From', 'Default', 'Scope'],
      (d.tunables ?? []).map((t) => [h('code', {}, t.name), String(t.value),
        h('span', { dataset: { source: t.name } }, tunableSource(t.name, spid, d.overrides ?? [])), String(t.default), t.scope]))),
    h('h3', {}, 'Recent association log'),
    errorOr(same ? detail.log : null, (d) => table(`The last ${(d.events ?? []).length} association events of ${spid}, newest first`,
      ['Time', 'Event', 'Association', 'NSAP', 'Functions', 'Reason'],
      (d.events ?? []).map((e) => [timeCell(e.at), e.event, orDash(e.association), h('code', { class: 'nsap' }, orDash(e.nsap)),
        orDash(e.functions), [e.reason, e.diagnostic ? ` (${e.diagnostic})` : '']]),
      'No association event yet.')));
}
