// The egress throttle groups (#/throttle-groups, router.js; docs/API.md "Throttle groups";
// DSR "Egress Throttle Groups" / "Egress Throttle Lists"): a far end serving several SPIDs,
// whose members every npacd node together keeps under the group's limits. First the list —
// members, configured and effective maxima, level, unreachable peers — then the group the
// URL names (#/throttle-groups/{name}): its level, the effective maxima against the
// configured ones, the aggregate of every node, this node's share, each node's last report
// with its age, and the peers whose counts do not arrive. One GET /v1/throttle-groups
// answers all of it, read again every few seconds while the view is open (console.js).
// Read-only: operators change groups with npacctl throttle-group or the API.

import { h, replaceKeepingFocus, table, yesNo, age, timeCell } from './dom.js';
import { get } from './api.js';
import { route, throttleGroupHref, providerHref } from './router.js';

// GET /v1/throttle-groups, or {error} when npacd refused it.
let groups = null;

export async function refreshThrottleGroups() {
  try {
    groups = await get('/v1/throttle-groups');
  } catch (e) {
    groups = { error: e.message };
  }
}

export function forgetThrottleGroups() { groups = null; }

// 10000 → "10000", 12.34 → "12.3"; a limit of 0 means that metric is not limited.
function number(v) {
  if (typeof v !== 'number') return '—';
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}
function limit(v) { return v === 0 ? 'unlimited' : number(v); }

// The level with its word: 0 holds nothing, 1..3 hold the members' messages.
function level(n) {
  if (typeof n !== 'number') return '—';
  return h('span', { class: n > 0 ? 'level-held' : null }, n > 0 ? `${n} (holding)` : '0 (none)');
}

function members(list) {
  return (list ?? []).map((spid, i) => [i ? ', ' : '', h('a', { href: providerHref(spid) }, spid)]);
}

function peers(list) { return list && list.length ? list.join(', ') : 'none'; }

function listTable(all, selected) {
  const rows = all.map((g) => {
    const live = g.live;
    return [
      h('a', { href: throttleGroupHref(g.name), 'aria-current': g.name === selected ? 'true' : null,
        'aria-label': `Show throttle group ${g.name}`, dataset: { key: `group-${g.name}`, group: g.name } }, g.name),
      members(g.members),
      limit(g.max_rate), limit(g.max_pending),
      live ? level(live.level) : '—',
      live ? limit(live.max_rate) : '—', live ? limit(live.max_pending) : '—',
      live ? peers(live.unreachable) : '—',
    ];
  });
  const node = all[0]?.node;
  return table(`Throttle groups: ${all.length} provisioned` + (node ? `, with what node ${node} knows live` : ''),
    ['Name', 'Members', 'Max rate (msg/s)', 'Max pending', 'Level', 'Effective max rate', 'Effective max pending', 'Unreachable peers'],
    rows, 'No throttle group is provisioned (npacctl throttle-group add).', { className: 'fit' });
}

function levelsTable(g) {
  const rows = [1, 2, 3].map((n) => {
    const inUse = n === 1 || (g[`onset_${n}`] !== 0 && g[`abatement_${n}`] !== 0);
    return [String(n), inUse ? `${g[`onset_${n}`]} %` : '—', inUse ? `${g[`abatement_${n}`]} %` : '—'];
  });
  return table(`Levels of ${g.name}: onset and abatement in % of the effective maxima`, ['Level', 'Onset', 'Abatement'], rows);
}

function detail(g) {
  const live = g.live;
  const item = (name, ...value) => h('div', {}, h('dt', {}, name), h('dd', {}, ...value));
  const parts = [h('h3', { id: 'throttle-group-title' }, `Throttle group ${g.name}`)];
  parts.push(h('div', { class: 'facts-bar' }, h('dl', { class: 'facts' },
    item('Level', live ? level(live.level) : '—'),
    item('Members', members(g.members)),
    item('On node', g.node ?? '—'),
    live ? item('Delivery rounds held here', String(live.holds)) : null,
    live ? item('Admitted here', String(live.admitted)) : null,
    item('Unreachable peers', h('span', { dataset: { unreachable: g.name } }, live ? peers(live.unreachable) : '—')))));
  if (!live) {
    parts.push(h('p', { class: 'note' }, `Not in force on ${g.node ?? 'this node'} yet: npacd reads a new group within a moment.`));
  } else {
    const share = live.share ?? {};
    parts.push(table(`Limits of ${g.name}: configured, effective (less ${g.peer_loss_reduction_percent} % per unreachable peer), ` +
      'the aggregate of every node and this node\'s share',
      ['Metric', 'Configured', 'Effective', 'Aggregate', 'This node\'s share'],
      [['Rate (msg/s)', limit(g.max_rate), limit(live.max_rate), number(live.rate), g.max_rate === 0 ? 'unlimited' : number(share.rate)],
        ['Pending', limit(g.max_pending), limit(live.max_pending), number(live.pending), g.max_pending === 0 ? 'unlimited' : number(share.pending)]]));
    parts.push(table(`Nodes of ${g.name}: each node's last report`,
      ['Node', 'Rate (msg/s)', 'Pending', 'Holding messages', 'Report age', 'Reachable'],
      (live.nodes ?? []).map((n) => [
        h('span', { dataset: { node: n.node } }, n.local ? `${n.node} (this node)` : n.node),
        number(n.rate), number(n.pending), yesNo(n.wanting), age((n.age_seconds ?? 0) * 1000),
        n.reachable ? 'yes' : h('span', { class: 'error-text' }, 'no')]),
      'No node has reported yet.'));
  }
  parts.push(levelsTable(g));
  parts.push(h('p', { class: 'muted' }, `A level is held at least ${g.min_abatement_time}.`,
    g.updated_at ? [' Changed ', timeCell(g.updated_at), ` by ${g.updated_by}.`] : null));
  return parts;
}

export function renderThrottleGroups() {
  const body = document.getElementById('throttle-groups-body');
  const selected = route().view === 'throttle-groups' ? route().group : null;
  document.title = `${selected ? `Throttle group ${selected}` : 'Throttle groups'} — npacd console`;
  if (!groups) {
    replaceKeepingFocus(body, h('p', { class: 'empty' }, 'Loading…'));
    return;
  }
  if (groups.error) {
    replaceKeepingFocus(body, h('p', { class: 'error-text' }, groups.error));
    return;
  }
  const all = groups.throttle_groups ?? [];
  const open = selected ? all.find((g) => g.name === selected) : null;
  replaceKeepingFocus(body,
    listTable(all, selected),
    selected && !open ? h('p', { class: 'error-text' }, `No throttle group named ${selected} is provisioned.`) : null,
    open ? detail(open) : (all.length ? h('p', { class: 'hint' }, 'Open a group by its name to see each node\'s share.') : null));
}
