// The console's DOM and formatting helpers. Every element is built with h(), never from
// HTML text, so a provider name or an audit value from the server is always text, never
// markup; and no style= attribute is ever written (the Content-Security-Policy allows
// styles from 'self' only: classes in console.css do the styling).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'text') el.textContent = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// Replaces `container`'s children and keeps the keyboard focus on the element with the
// same data-key, so a live update does not throw a keyboard user back to the page's top.
export function replaceKeepingFocus(container, ...children) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : undefined;
  container.replaceChildren();
  append(container, children);
  if (key !== undefined) {
    const again = container.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}

// A table: caption, header cells and rows (arrays of cells: a Node or text), in a box
// that scrolls sideways when the table is wider than the window. `className` 'fit' makes
// it as wide as its box and lets its cells wrap, so it fits instead of scrolling.
export function table(caption, headers, rows, emptyText = 'none', { className } = {}) {
  const body = rows.length
    ? rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))
    : [h('tr', {}, h('td', { colspan: headers.length, class: 'empty' }, emptyText))];
  return h('div', { class: 'scroll' }, h('table', { class: className },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, body)));
}

export function yesNo(value) {
  if (value === undefined || value === null) return '—';
  return value ? 'yes' : 'no';
}

export function orDash(value) {
  return value === undefined || value === null || value === '' ? '—' : String(value);
}

// "2026-11-29T16:02:11.402Z" → "16:02:11 UTC" today (by UTC), else the date too. npacd
// answers UTC and so does the console: an on-call person compares it with logs and
// alerts from other places, never with the browser's own time zone.
export function shortTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const text = d.toISOString();
  const today = new Date().toISOString().slice(0, 10);
  return text.slice(0, 10) === today ? `${text.slice(11, 19)} UTC` : `${text.slice(0, 10)} ${text.slice(11, 19)} UTC`;
}

export function timeCell(iso) {
  return h('time', { datetime: iso ?? '', title: iso ?? '' }, shortTime(iso));
}

// 5210 → "5.2 s", 754000 → "12 min 34 s".
export function age(ms) {
  if (ms === undefined || ms === null) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3600000) return `${Math.floor(ms / 60000)} min ${Math.floor((ms % 60000) / 1000)} s`;
  return `${Math.floor(ms / 3600000)} h ${Math.floor((ms % 3600000) / 60000)} min`;
}

export function since(iso) {
  if (!iso) return '—';
  return age(Date.now() - new Date(iso).getTime());
}
