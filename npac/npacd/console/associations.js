// One provider's live associations as a table that fits its box at 1280×800 with the
// Abort button in view: the NSAP and the peer share a cell, the state is a coloured badge
// (with congested/silent/recovering flags the state does not already say), and the
// columns that do not apply are left out — weight and cost only under the weighted and
// LRTM policies, load % only under weighted, Nw only under LRTM, the heartbeat round trip
// only when heartbeats are measured.

import { h, table, orDash, since, timeCell } from './dom.js';
import { state, canOperate, confirmDialog, change, kReadOnlyNote } from './app.js';
import { associationsOf } from './providers.js';
import { stateBadge } from './states.js';

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

// The state badge, then what the queue poll says besides it: a silent association may be
// at its congestion window too, and a recovering provider's association may be either.
function stateCell(a, q) {
  const flags = [];
  if (q?.congested && a.state !== 'congested') flags.push('congested');
  if (q?.silent && a.state !== 'silent') flags.push('silent');
  if (a.recovery_mode && a.state !== 'recovering') flags.push('recovery mode');
  return h('span', { class: 'state-cell', dataset: { state: a.id } }, stateBadge(a.state),
    flags.length ? h('span', { class: 'flags' }, ` also ${flags.join(', ')}`) : null);
}

const percent = (v) => (v === undefined || v === null ? '—' : h('span', { class: 'nowrap' }, `${Number(v).toFixed(1)} %`));

export function associationsTable(spid, policy) {
  const live = new Map((state.queues.get(spid)?.associations ?? []).map((x) => [x.id, x]));
  const assocs = associationsOf(spid);
  const heartbeats = assocs.some((a) => a.heartbeat_rtt_ms !== undefined && a.heartbeat_rtt_ms !== null);
  const weighted = policy === 'weighted';
  const lrtm = policy === 'lrtm';
  const columns = [
    ['ID', (a) => String(a.id)],
    ['NSAP and peer', (a) => [h('code', { class: 'nsap' }, a.nsap), h('br'), h('span', { class: 'peer' }, a.peer)]],
    // "soa-management|notifications" may break after each bar, nowhere else.
    ['Functions (mask)', (a) => [String(a.functions ?? '').split('|').flatMap((f, i) => (i ? ['|', h('wbr'), f] : [f])),
      ` (${a.function_mask})`]],
    ['State', (a) => stateCell(a, live.get(a.id))],
    ['Bound', (a) => [timeCell(a.bound_at), h('br'), h('span', { class: 'muted' }, `${since(a.bound_at)} ago`)]],
    ['Outstanding', (a) => String(a.outstanding ?? '—')],
    heartbeats && ['Heartbeat RTT', (a) => (a.heartbeat_rtt_ms === undefined || a.heartbeat_rtt_ms === null
      ? '—' : `${Number(a.heartbeat_rtt_ms).toFixed(1)} ms`)],
    ['Sent / received / retransmitted', (a) => `${a.sent ?? 0} / ${a.received ?? 0} / ${a.retransmissions ?? 0}`],
    (weighted || lrtm) && ['Weight', (a) => orDash(a.weight)],
    weighted && ['Cost', (a) => orDash(a.relative_cost)],
    weighted && ['Load', (a) => percent(a.load_percent)],
    lrtm && ['Nw', (a) => (a.lrtm?.nw === undefined || a.lrtm?.nw === null ? '—' : Number(a.lrtm.nw).toFixed(1))],
    ['Action', (a) => abortButton(a)],
  ].filter(Boolean);
  return table(`Associations of ${spid}, live`, columns.map(([name]) => name),
    assocs.map((a) => columns.map(([, cell]) => cell(a))), 'No association is up.', { className: 'fit associations' });
}
