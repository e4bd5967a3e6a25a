// What an association's state (GET /v1/associations "state", docs/API.md) means to an
// operator: whether it is up, and its colour. Congested (at congestion_window), silent (a
// request passed response_timeout) and recovering (NANC 351) associations are still bound:
// slow or paused, not down; only a releasing one is on its way out. npacd's
// npacd_associations_up counts the same way (docs/OPERATIONS.md "Metrics").

import { h } from './dom.js';

export const kUpStates = ['bound', 'congested', 'silent', 'recovering'];

export function isUp(association) {
  return kUpStates.includes(association.state);
}

// The state as a coloured badge (console.css .state-*) reading `text` (the state's own
// word by default); the word is always there, so colour is never the only sign (WCAG 2.1
// §1.4.1).
export function stateBadge(state, text = state) {
  const known = [...kUpStates, 'releasing'].includes(state);
  return h('span', { class: `state state-${known ? state : 'other'}` }, text ?? '—');
}

// "3 congested, 1 bound": the live associations of one provider by state, busiest first.
export function stateCounts(associations) {
  const counts = new Map();
  for (const a of associations) counts.set(a.state, (counts.get(a.state) ?? 0) + 1);
  const order = ['silent', 'congested', 'recovering', 'bound', 'releasing'];
  return [...counts.entries()].sort((x, y) => order.indexOf(x[0]) - order.indexOf(y[0]));
}
