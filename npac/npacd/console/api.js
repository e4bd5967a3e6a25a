// The console's client of npacd's admin API (docs/API.md): every call carries the
// signed-in token as `Authorization: Bearer` (RFC 6750 §2.1); the token lives in
// sessionStorage only, so it is gone when the tab closes and never reaches a cookie.
// The live view reads GET /v1/events (WHATWG HTML "Server-sent events" format) with
// fetch() and a ReadableStream, because EventSource cannot send an Authorization header;
// when npacd does not answer the stream, the console polls GET /v1/associations and
// GET /v1/providers instead.

const kTokenKey = 'npacd.console.token';

export const session = {
  get token() { return sessionStorage.getItem(kTokenKey); },
  set token(value) {
    if (value) sessionStorage.setItem(kTokenKey, value);
    else sessionStorage.removeItem(kTokenKey);
  },
};

// An answer npacd refused: its status, code and message (docs/API.md "Conventions").
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function call(method, path, body, token = session.token) {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'unreachable', `npacd did not answer ${method} ${path}: ${e.message}`);
  }
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (!response.ok) {
    const err = json && json.error ? json.error : { code: `http_${response.status}`, message: text || response.statusText };
    // npacd's messages name the route themselves (docs/API.md "Authentication").
    throw new ApiError(response.status, err.code, `npacd answered ${response.status} ${err.code}: ${err.message}`);
  }
  return json;
}

export const get = (path, token) => call('GET', path, undefined, token);

// Reads one server-sent event stream until it ends, the signal aborts or an error.
// onEvent(type, data, id) for each dispatched event. Resolves to
// {streamed: false, status} when npacd answered something other than an event stream
// (an npacd without GET /v1/events: the caller polls), else {streamed: true}.
export async function readEvents(path, onEvent, signal) {
  const response = await fetch(path, {
    headers: { Authorization: `Bearer ${session.token}`, Accept: 'text/event-stream' },
    signal,
    cache: 'no-store',
  });
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok || !type.startsWith('text/event-stream')) {
    await response.text().catch(() => '');
    return { streamed: false, status: response.status };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = { type: '', data: [], id: '' };
  // WHATWG HTML §9.2.6: lines end in CR LF, LF or CR; a blank line dispatches; a line
  // starting with ':' is a comment (the keepalives); "field: value" drops one space.
  const line = (text) => {
    if (text === '') {
      if (event.data.length) onEvent(event.type || 'message', event.data.join('\n'), event.id);
      event = { type: '', data: [], id: event.id };
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event.type = value;
    else if (field === 'data') event.data.push(value);
    else if (field === 'id') event.id = value;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let at;
    while ((at = buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A lone CR at the very end may be the first half of CR LF: wait for more.
      if (buffer[at] === '\r' && at === buffer.length - 1) break;
      const eol = buffer.startsWith('\r\n', at) ? 2 : 1;
      line(buffer.slice(0, at));
      buffer = buffer.slice(at + eol);
    }
  }
  return { streamed: true };
}
