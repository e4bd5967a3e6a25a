// The console's views and their URLs. Each view has an address of its own in the URL's
// fragment, so it can be bookmarked, reloaded, opened in a new tab and reached with the
// browser's Back button; npacd serves one page, /console/, for all of them.
//
//   #/                        the overview: what on-call looks at first, then the providers
//   #/providers/{spid}        one provider
//   #/audit                   the audit log
//   #/association-log         the association log (…/{spid}: filtered to one provider)
//   #/throttle-groups         the egress throttle groups (…/{name}: one of them open)
//
// A fragment that does not start with "#/" (the skip link's #main) is not a view and
// leaves the current one in place. Single-threaded (the page's event loop).

const kSpid = /^[A-Za-z0-9]{4}$/;
// A throttle group's name (npac/npacd/api/throttle_group_json.h).
const kGroupName = /^[A-Za-z0-9._-]{1,64}$/;

// The view `hash` names: {view: 'overview' | 'provider' | 'audit' | 'association-log' |
// 'throttle-groups', spid, group}, or null when it names none.
export function parseRoute(hash) {
  if (hash === '' || hash === '#' || hash === '#/') return { view: 'overview', spid: null };
  if (!hash.startsWith('#/')) return null;
  const parts = hash.slice(2).split('/').map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  if (parts[0] === 'providers' && parts.length === 2 && kSpid.test(parts[1])) return { view: 'provider', spid: parts[1] };
  if (parts[0] === 'audit' && parts.length === 1) return { view: 'audit', spid: null };
  if (parts[0] === 'association-log' && parts.length <= 2 && (parts.length === 1 || kSpid.test(parts[1]))) {
    return { view: 'association-log', spid: parts[1] ?? null };
  }
  if (parts[0] === 'throttle-groups' && parts.length <= 2 && (parts.length === 1 || kGroupName.test(parts[1]))) {
    return { view: 'throttle-groups', spid: null, group: parts[1] ?? null };
  }
  return { view: 'overview', spid: null };  // an address that names no view: the overview
}

export function providerHref(spid) { return `#/providers/${encodeURIComponent(spid)}`; }
export function associationLogHref(spid) { return spid ? `#/association-log/${encodeURIComponent(spid)}` : '#/association-log'; }
export function throttleGroupHref(name) { return name ? `#/throttle-groups/${encodeURIComponent(name)}` : '#/throttle-groups'; }

// The route in force: the last one the URL named (the overview at first).
let current = parseRoute(location.hash) ?? { view: 'overview', spid: null };
export function route() { return current; }

// Calls `show(route, {initial})` now and whenever the URL names another view.
export function onRoute(show) {
  window.addEventListener('hashchange', () => {
    const next = parseRoute(location.hash);
    if (!next) return;
    current = next;
    show(current, { initial: false });
  });
  show(current, { initial: true });
}
