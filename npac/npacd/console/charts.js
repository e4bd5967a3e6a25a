// The console's pictures, drawn as inline SVG elements (no library, no style attribute:
// colours come from classes in console.css). Each picture is role="img" with an
// accessible name that says in words what it shows, for a screen reader and for tests.

const kSvg = 'http://www.w3.org/2000/svg';

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(kSvg, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

function picture(width, height, label, ...children) {
  return s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label, class: 'chart' },
    s('title', {}, label), ...children);
}

// Round robin: one row per association, one column per pick (oldest left, newest right),
// a mark where that association carried the PDU (outlined: a retransmission). NANC 353
// asks for strict rotation, so a healthy round robin draws a staircase.
export function roundRobinPicture(egress) {
  const picks = egress?.recent ?? [];
  const ids = [...new Set(picks.map((p) => p.association_id))].sort((a, b) => a - b);
  if (picks.length === 0) return null;
  const cell = 10, left = 70, top = 6;
  // At least 24 columns wide, so a few picks still leave room for the axis words.
  const width = left + Math.max(picks.length, 24) * cell + 10, height = top + ids.length * (cell + 4) + 18;
  const rows = ids.map((id, row) => s('g', {},
    s('text', { x: 4, y: top + row * (cell + 4) + cell - 1, class: 'axis' }, `assoc ${id}`),
    picks.map((p, i) => (p.association_id === id
      ? s('rect', { x: left + i * cell, y: top + row * (cell + 4), width: cell - 2, height: cell,
        class: `pick c${row % 6}${p.retransmission ? ' retransmission' : ''}` },
      s('title', {}, `${p.at ?? ''} ${p.function ?? ''} on association ${id}${p.retransmission ? ' (retransmission)' : ''}`))
      : null))));
  const label = `Round robin (${egress.policy ?? 'policy unknown'}): the last ${picks.length} picks, oldest first, ` +
    `went to associations ${picks.map((p) => p.association_id).join(' ')}`;
  return picture(width, height, label, rows,
    s('text', { x: left, y: height - 4, class: 'axis' }, 'oldest'),
    s('text', { x: width - 40, y: height - 4, class: 'axis' }, 'newest'));
}

// A line over the last minutes: points [{t, v}] (v null = unknown, skipped).
export function linePicture(points, title, unit) {
  const known = points.filter((p) => p.v !== null && p.v !== undefined);
  const width = 420, height = 120, left = 44, bottom = 18, top = 8;
  if (known.length === 0) return null;
  const t0 = known[0].t, t1 = Math.max(known[known.length - 1].t, t0 + 1);
  const max = Math.max(1, ...known.map((p) => p.v));
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - 8);
  const y = (v) => top + (1 - v / max) * (height - top - bottom);
  const last = known[known.length - 1].v;
  const minutes = Math.max(1, Math.round((t1 - t0) / 60000));
  const label = `${title} over the last ${minutes} min: now ${fmt(last)} ${unit}, highest ${fmt(max)} ${unit}`;
  return picture(width, height, label,
    s('line', { x1: left, y1: top, x2: left, y2: height - bottom, class: 'axis-line' }),
    s('line', { x1: left, y1: height - bottom, x2: width - 8, y2: height - bottom, class: 'axis-line' }),
    s('text', { x: 2, y: top + 8, class: 'axis' }, fmt(max)),
    s('text', { x: 2, y: height - bottom, class: 'axis' }, '0'),
    s('text', { x: left, y: height - 4, class: 'axis' }, `${minutes} min ago`),
    s('text', { x: width - 40, y: height - 4, class: 'axis' }, 'now'),
    s('polyline', { points: known.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' '), class: 'series' }));
}

function fmt(v) {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

// Horizontal bar pairs per association: [{label, a, b}] with a legend for a and b,
// a on a 0..maxA scale and b on a 0..maxB one.
function barPairs(items, legendA, legendB, maxA, maxB, label) {
  const left = 90, bar = 9, gap = 8, width = 420;
  const height = 22 + items.length * (2 * bar + gap);
  const scale = (v, max) => ((width - left - 60) * Math.max(0, v ?? 0)) / (max || 1);
  return picture(width, height, label,
    s('rect', { x: left, y: 4, width: 10, height: 8, class: 'bar-a' }),
    s('text', { x: left + 14, y: 12, class: 'axis' }, legendA),
    s('rect', { x: left + 150, y: 4, width: 10, height: 8, class: 'bar-b' }),
    s('text', { x: left + 164, y: 12, class: 'axis' }, legendB),
    items.map((it, i) => {
      const y0 = 20 + i * (2 * bar + gap);
      return s('g', {},
        s('text', { x: 4, y: y0 + bar + 3, class: 'axis' }, it.label),
        s('rect', { x: left, y: y0, width: scale(it.a, maxA), height: bar, class: 'bar-a' }),
        s('text', { x: left + scale(it.a, maxA) + 4, y: y0 + bar - 1, class: 'axis' }, fmt(it.a ?? 0)),
        s('rect', { x: left, y: y0 + bar, width: scale(it.b, maxB), height: bar, class: 'bar-b' }),
        s('text', { x: left + scale(it.b, maxB) + 4, y: y0 + 2 * bar - 1, class: 'axis' }, fmt(it.b ?? 0)));
    }));
}

// Weighted cost groups (the EAGLE "Weighted GTT Load Sharing" view): each association's
// current load % against its weight's share of its group.
export function weightedPicture(associations) {
  const rows = associations.filter((a) => a.load_percent !== undefined && a.load_percent !== null);
  if (rows.length === 0) return null;
  const byCost = new Map();
  for (const a of rows) byCost.set(a.relative_cost ?? 0, (byCost.get(a.relative_cost ?? 0) ?? 0) + (a.weight ?? 0));
  const items = rows.map((a) => ({
    label: `assoc ${a.id}`,
    a: a.load_percent,
    b: byCost.get(a.relative_cost ?? 0) ? (100 * (a.weight ?? 0)) / byCost.get(a.relative_cost ?? 0) : 0,
  }));
  const label = 'Weighted load: ' + items.map((i) => `${i.label} carries ${fmt(i.a)} % against a weight share of ${fmt(i.b)} %`).join('; ');
  return barPairs(items, 'load %', 'weight share %', 100, 100, label);
}

// Least response time from monitors (Citrix ADC "LRTM method", docs/DISPATCH.md): per
// association N = active requests × response time and Nw = N × 10000 / weight; the
// smallest Nw is picked next.
export function lrtmPicture(associations) {
  const rows = associations.filter((a) => a.lrtm);
  if (rows.length === 0) return null;
  const items = rows.map((a) => ({ label: `assoc ${a.id}`, a: a.lrtm.n, b: a.lrtm.nw }));
  const maxN = Math.max(1, ...items.map((i) => i.a ?? 0));
  const maxNw = Math.max(1, ...items.map((i) => i.b ?? 0));
  const label = 'LRTM: ' + rows.map((a) => `association ${a.id} N ${fmt(a.lrtm.n ?? 0)} Nw ${fmt(a.lrtm.nw ?? 0)}, response time ` +
    `${a.lrtm.response_time_ms === null || a.lrtm.response_time_ms === undefined ? '—' : fmt(a.lrtm.response_time_ms)} ms` +
    `${a.lrtm.measured === false ? ' (not measured yet)' : ''}`).join('; ');
  return barPairs(items, 'N', 'Nw (own scale)', maxN, maxNw, label);
}

// Queue depth and PDUs/s from the page's own samples (providers.js recordHistory): the
// rate counts, between two samples, what each association present in both sent.
export function historySeries(samples) {
  const queued = samples.map((x) => ({ t: x.t, v: x.queued }));
  const rate = [];
  for (let i = 1; i < samples.length; ++i) {
    const a = samples[i - 1], b = samples[i];
    let sent = 0;
    for (const [id, n] of Object.entries(b.sent)) if (id in a.sent) sent += Math.max(0, n - a.sent[id]);
    const dt = (b.t - a.t) / 1000;
    if (dt > 0) rate.push({ t: b.t, v: sent / dt });
  }
  return { queued, rate };
}
