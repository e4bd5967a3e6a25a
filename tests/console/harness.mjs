// The console tests' harness: a real npacd ($NPAC_BIN/npacd) on a fresh SQLite file in a
// temp directory with ephemeral ports read back from its start-up line (as
// tests/npac/npacd/npacd_fixture.h does), its admin API over fetch(), npac-soa-sim runs, and
// the system Chromium (/usr/bin/chromium) driven by playwright-core — never a downloaded
// browser. Every wait is bounded; children are killed when the test ends, however it ends.
// A page's console errors and uncaught exceptions fail the test, except the refusals a
// step expects (Chromium logs each 4xx answer to fetch() as a console error).

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const bin = process.env.NPAC_BIN;
const modules = process.env.NPAC_CONSOLE_MODULES;
export const screenshots = process.env.NPAC_CONSOLE_SCREENSHOTS ?? path.join(os.tmpdir(), 'console-screenshots');
const chromiumPath = process.env.NPAC_CHROMIUM ?? '/usr/bin/chromium';
if (!bin || !modules) throw new Error('NPAC_BIN and NPAC_CONSOLE_MODULES must be set (ctest sets them)');
const { chromium } = createRequire(path.join(modules, 'package.json'))('playwright-core');

const children = new Set();
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// `promise`'s value, or 'timeout' after `ms` (the timer is cleared either way, so it
// does not keep node running after the test).
async function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), ms); });
  try { return await Promise.race([promise, timeout]); } finally { clearTimeout(timer); }
}

// Polls `probe` until it returns a truthy value, at most `ms`; throws naming `what`.
export async function waitUntil(what, probe, ms = 10000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(50);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

function run(argv, log) {
  const out = fs.openSync(log, 'a');
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  children.add(child);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    children.delete(child);
    resolve(code ?? signal);
  }));
  return child;
}

export class Npacd {
  static async start() {
    const npacd = new Npacd();
    await npacd.#start();
    return npacd;
  }

  #sequence = 1000;

  async #start() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'npacd-console-'));
    this.db = path.join(this.dir, 'npacd.db');
    this.logFile = path.join(this.dir, 'npacd.log');
    this.child = run([`${bin}/npacd`, '--db', this.db, '--listen', '127.0.0.1:0', '--api', '127.0.0.1:0',
      '--durability', 'normal'], this.logFile);
    const ready = /listening for associations on 127\.0\.0\.1:(\d+), admin API on 127\.0\.0\.1:(\d+)/;
    const m = await waitUntil('npacd to start', () => {
      if (this.child.exitCode !== null) throw new Error(`npacd exited at start: ${this.log()}`);
      return ready.exec(this.log());
    });
    this.port = Number(m[1]);
    this.base = `http://127.0.0.1:${m[2]}`;
    this.token = fs.readFileSync(`${this.db}.token`, 'utf8').split('\n')[0];
  }

  log() { return fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : ''; }

  // One admin API call with `token` (default: npacd's first operator token): {status, body}.
  async call(method, route, body, token = this.token) {
    const headers = { Authorization: `Bearer ${token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(this.base + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let json = null;
    try { json = JSON.parse(text); } catch { json = text; }
    return { status: response.status, body: json };
  }

  async must(method, route, body, status) {
    const r = await this.call(method, route, body);
    if (r.status !== status) throw new Error(`${method} ${route}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  // A token of `role` named `name` (POST /v1/tokens); its secret.
  async createToken(name, role) {
    return (await this.must('POST', '/v1/tokens', { name, role }, 201)).token;
  }

  // A provisioned SOA provider with an Ed25519 key (list 1, key 1) made by the sim's keygen.
  async provision(spid, { srr = false } = {}) {
    await this.must('POST', '/v1/providers', { spid, name: `Provider ${spid}`, system_type: 'soa' }, 201);
    const key = path.join(this.dir, `key-${spid}.pem`);
    const keygen = run([`${bin}/npac-soa-sim`, 'keygen', '--out', key], path.join(this.dir, 'keygen.log'));
    const code = await within(keygen.exited, 20000);
    if (code !== 0) throw new Error(`npac-soa-sim keygen: ${code}`);
    await this.must('POST', `/v1/providers/${spid}/keys`, { key_list_id: 1, key_id: 1, algorithm: 'ed25519',
      public_key_pem: fs.readFileSync(`${key}.pub`, 'utf8') }, 201);
    if (srr) await this.must('PUT', `/v1/providers/${spid}/srr`, { on: true }, 200);
    return key;
  }

  // npac-soa-sim bound to this npacd (it verifies the NPAC's signed bind answer with the
  // exported NPAC key, as a provider does).
  async sim(spid, key, args) {
    const npacKey = path.join(this.dir, 'npac.pub.pem');
    fs.writeFileSync(npacKey, (await this.must('GET', '/v1/npac-keys/1/1/public', undefined, 200)).public_key_pem);
    const n = this.#sequence;
    this.#sequence += 100;
    return run([`${bin}/npac-soa-sim`, '--npac', `127.0.0.1:${this.port}`, '--spid', spid, '--key', key,
      '--npac-key', npacKey, '--functions', 'soa-management,notifications', '--sequence', String(n),
      '--report', path.join(this.dir, `sim-${n}.json`), '--log-level', 'warn', ...args], path.join(this.dir, `sim-${n}.log`));
  }

  async associations() {
    return (await this.must('GET', '/v1/associations', undefined, 200)).associations;
  }

  // A notification for `spid` needing `fn` (docs/API.md "Messages").
  static message(spid, fn) {
    return { spid, function: fn, operation: 'event-report', object_class: '1.3.6.1.4.1.103.7.0.0.1.3',
      instance: { dn: [[{ id: '2.5.4.3', value: '13044e504143' }]] }, type: '1.3.6.1.4.1.103.7.0.0.5.1', information: '0400' };
  }

  async stop() {
    for (const c of [...children]) if (c !== this.child) c.kill('SIGKILL');
    if (this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      const code = await within(this.child.exited, 10000);
      if (code === 'timeout') this.child.kill('SIGKILL');
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// Chromium with this machine's flags (closed network, root), a fresh profile (Playwright
// makes a new --user-data-dir for each launch), a 1280×800 window.
export async function openBrowser() {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    timeout: 20000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10000);
  const page = await context.newPage();
  const problems = [];
  let allowed = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const text = m.text();
    if (allowed.some((re) => re.test(text))) return;
    problems.push(`console error: ${text} (${m.location()?.url ?? ''})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  let inFlight = 0;
  page.on('request', () => { inFlight += 1; });
  page.on('requestfinished', () => { inFlight -= 1; });
  page.on('requestfailed', () => { inFlight -= 1; });
  fs.mkdirSync(screenshots, { recursive: true });
  return {
    browser,
    page,
    problems,
    // Runs `step` while Chromium's log line for an answer with `status` is expected.
    async expectingRefusal(status, step) {
      const re = new RegExp(`^Failed to load resource: the server responded with a status of ${status} `);
      allowed.push(re);
      try { return await step(); } finally { allowed = allowed.filter((x) => x !== re); }
    },
    // Resolves once the page has no request open (the event stream counts as open).
    settled() { return waitUntil('the page\'s requests to finish', () => inFlight === 0); },
    // A PNG in $NPAC_CONSOLE_SCREENSHOTS: the whole page, or with `fullPage` false what
    // the 1280×800 window shows.
    shot(name, { fullPage = true } = {}) {
      return page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage });
    },
    close() { return browser.close(); },
  };
}

// Signs in on the console page with `token`.
export async function signIn(page, base, token) {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
