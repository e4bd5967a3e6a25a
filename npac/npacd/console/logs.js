// The audit log (GET /v1/audit-log: every configuration change with the token name that
// made it, and refused requests) and the association log (GET /v1/association-log:
// binds, rejects, releases, aborts), each with filters. The SPID filter of the
// association log is npacd's (?spid=); the others filter the rows read, in the page.

import { h, replaceKeepingFocus, table, orDash, timeCell } from './dom.js';
import { get } from './api.js';

const kRows = 500;
const logs = { audit: null, associations: null };

function value(id) { return document.getElementById(id).value.trim().toLowerCase(); }

function contains(text, needle) { return needle === '' || String(text ?? '').toLowerCase().includes(needle); }

export async function refreshAudit() {
  try {
    logs.audit = await get(`/v1/audit-log?limit=${kRows}`);
  } catch (e) {
    logs.audit = { error: e.message };
  }
  renderAudit();
}

export function renderAudit() {
  const box = document.getElementById('audit-table');
  const data = logs.audit;
  if (!data) return;
  if (data.error) {
    replaceKeepingFocus(box, h('p', { class: 'error-text' }, data.error));
    return;
  }
  const actor = value('audit-actor'), action = value('audit-action'), text = value('audit-text');
  const rows = (data.entries ?? []).filter((e) => contains(e.actor, actor) && contains(e.action, action) &&
    (contains(e.subject, text) || contains(e.old_value, text) || contains(e.new_value, text)));
  replaceKeepingFocus(box, table(`Audit log: ${rows.length} of the last ${(data.entries ?? []).length} entries, newest first`,
    ['Time', 'Actor', 'Action', 'Subject', 'Old value', 'New value'],
    rows.map((e) => [timeCell(e.at), e.actor, e.action, e.subject, h('code', {}, orDash(e.old_value)), h('code', {}, orDash(e.new_value))]),
    'No entry matches.'));
}

export async function refreshAssociationLog() {
  const spid = document.getElementById('alog-spid').value.trim();
  const query = spid ? `&spid=${encodeURIComponent(spid)}` : '';
  try {
    logs.associations = await get(`/v1/association-log?limit=${kRows}${query}`);
  } catch (e) {
    logs.associations = { error: e.message };
  }
  renderAssociationLog();
}

export function renderAssociationLog() {
  const box = document.getElementById('alog-table');
  const data = logs.associations;
  if (!data) return;
  if (data.error) {
    replaceKeepingFocus(box, h('p', { class: 'error-text' }, data.error));
    return;
  }
  const event = document.getElementById('alog-event').value, text = value('alog-text');
  const rows = (data.events ?? []).filter((e) => (event === '' || e.event === event) &&
    (contains(e.reason, text) || contains(e.diagnostic, text) || contains(e.nsap, text) || contains(e.functions, text)));
  replaceKeepingFocus(box, table(`Association log: ${rows.length} of the last ${(data.events ?? []).length} events, newest first`,
    ['Time', 'Event', 'SPID', 'Association', 'NSAP', 'Functions', 'Recovery', 'Reason'],
    rows.map((e) => [timeCell(e.at), e.event, orDash(e.spid), orDash(e.association), h('code', { class: 'nsap' }, orDash(e.nsap)),
      orDash(e.functions), e.recovery_mode ? 'yes' : 'no', [e.reason, e.diagnostic ? ` (${e.diagnostic})` : '']]),
    'No event matches.'));
}

export function setUpLogs() {
  for (const id of ['audit-actor', 'audit-action', 'audit-text']) {
    document.getElementById(id).addEventListener('input', renderAudit);
  }
  document.getElementById('audit-refresh').addEventListener('click', refreshAudit);
  for (const id of ['alog-event', 'alog-text']) {
    document.getElementById(id).addEventListener('input', renderAssociationLog);
  }
  document.getElementById('alog-spid').addEventListener('change', refreshAssociationLog);
  document.getElementById('alog-refresh').addEventListener('click', refreshAssociationLog);
}
