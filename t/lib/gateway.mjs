// SPDX-License-Identifier: ISC
// Start the real mcp-supervisord for a test: a private temporary
// directory, its own control socket, an ephemeral port, and upstreams from
// the build tree.  Every process started here is stopped by stop() or,
// failing that, when the test process exits.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, openSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const srcdir = process.env.top_srcdir ?? path.resolve(here, '../..');
export const builddir = process.env.top_builddir ?? path.resolve(srcdir, 'build');
export const bin = {
  supervisord: path.join(builddir, 'supervisor/mcp-supervisord'),
  worker: path.join(builddir, 'worker/mcp-worker'),
  mcpctl: path.join(builddir, 'mcpctl/mcpctl'),
  demo: path.join(builddir, 'demo/mcp-demo-server'),
};
export const nodeModules = path.join(srcdir, 't/node_modules');

const live = new Set();
process.on('exit', () => {
  for (const g of live) {
    try { process.kill(-g.pid, 'SIGKILL'); } catch { /* gone */ }
  }
});

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Track a process started by a test (in its own process group), so that it
// is killed when the test process exits, whatever happens.
export function track(child) {
  const entry = { pid: child.pid };
  live.add(entry);
  child.once('exit', () => live.delete(entry));
  return child;
}

// A libconfig string literal.
export const q = (s) => JSON.stringify(s);

// The path of a program on $PATH, or ''.
export function which(cmd) {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

// A free loopback port (a small race, as with any port picked this way).
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// A stdio upstream running mcp-demo-server.
export function demo(name, extra = '') {
  return `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(bin.demo)}, "--test-tools", "--name", ${q(name)} ]; ${extra} }`;
}

// Follow an authorization URL's redirects with their cookies, as a
// browser would, until one goes to redirectUri; that URL, not fetched.
export async function followLogin(authorizationUrl, redirectUri) {
  const cookies = new Map();
  let url = String(authorizationUrl);
  for (let i = 0; i < 20; i++) {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [nv] = c.split(';');
      const eq = nv.indexOf('=');
      cookies.set(nv.slice(0, eq), nv.slice(eq + 1));
    }
    const loc = res.headers.get('location');
    if (res.status < 300 || res.status > 399 || !loc) {
      throw new Error(`login stopped at ${url}: ${res.status} ${await res.text()}`);
    }
    url = new URL(loc, url).href;
    if (url.startsWith(redirectUri)) return new URL(url);
  }
  throw new Error('login: too many redirects');
}

export class Gateway {
  constructor(dir, child) {
    this.dir = dir;
    this.child = child;
    this.pid = child.pid;
    this.ctl = path.join(dir, 'control.sock');
    this.logFile = path.join(dir, 'supervisord.log');
  }

  // mcpctl -j status; it exits 3 when something required is unhealthy,
  // which is still an answer.
  status() {
    let out;
    try {
      out = execFileSync(bin.mcpctl, ['-j', '-s', this.ctl, 'status'], {
        encoding: 'utf8', timeout: 10000,
      });
    } catch (e) {
      if (e.status !== 3) throw e;
      out = e.stdout;
    }
    return JSON.parse(out);
  }

  mcpctl(...args) {
    return execFileSync(bin.mcpctl, ['-s', this.ctl, ...args], {
      encoding: 'utf8', timeout: 10000,
    });
  }

  upstream(name) {
    return this.status().upstreams.find((u) => u.name === name);
  }

  // mcpctl login NAME as an operator would run it: read the URL it
  // prints, be the browser (browse(url, redirectUri) returns the URL the
  // authorization server sent it back to; followLogin by default), then
  // let that URL reach the gateway's callback, or with paste: true type
  // it into mcpctl.  Resolves to { code, stdout, stderr } of mcpctl.
  async login(name, { paste = false, browse = followLogin, args = [] } = {}) {
    const child = spawn(bin.mcpctl, ['-s', this.ctl, 'login', name, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    track(child);
    let stdout = '', stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((r) => child.once('exit', (code) => r(code)));
    const url = await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.includes('\n')) resolve(stdout.split('\n')[0]);
      });
      exited.then((code) => reject(new Error(`mcpctl login exited ${code}: ${stdout}${stderr}`)));
    });
    try {
      const redirectUri = new URL(url).searchParams.get('redirect_uri');
      const back = await browse(url, redirectUri);
      if (paste) child.stdin.write(`${back}\n`);
      else await fetch(back);
    } catch (e) {
      child.kill('SIGTERM');
      throw e;
    }
    const code = await exited;
    return { code, stdout, stderr };
  }

  // The daemon's log so far ('' once its directory is gone, so that an
  // after-hook that prints it still reaches stop()).
  log() {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  // Reports written by AddressSanitizer or UBSan in any of our processes.
  sanitizerReports() {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir).filter((f) => /^(asan|ubsan)\./.test(f))
      .map((f) => `${f}:\n${readFileSync(path.join(this.dir, f), 'utf8')}`);
  }

  // Wait until a predicate over the status holds.
  async waitFor(pred, what = 'condition', ms = 20000) {
    const until = Date.now() + ms;
    let last;
    while (Date.now() < until) {
      try {
        last = this.status();
        if (pred(last)) return last;
      } catch (e) {
        last = e.message;
      }
      await sleep(50);
    }
    throw new Error(`timed out waiting for ${what}; last status: ${JSON.stringify(last)}\n--- log ---\n${this.log()}`);
  }

  async ready(ms) {
    return this.waitFor((s) => s.upstreams.every((u) => u.state === 'ready'), 'upstreams ready', ms);
  }

  async stop() {
    if (this.exited) return this.exitCode;
    const done = new Promise((r) => this.child.once('exit', (code) => r(code)));
    try { process.kill(this.pid, 'SIGTERM'); } catch { /* gone */ }
    const timer = setTimeout(() => {
      try { process.kill(-this.pid, 'SIGKILL'); } catch { /* gone */ }
    }, 15000);
    const code = await done;
    clearTimeout(timer);
    // Anything left in the daemon's process group is a leak.
    try { process.kill(-this.pid, 'SIGKILL'); } catch { /* none */ }
    live.delete(this);
    const reports = this.sanitizerReports();
    if (reports.length > 0) {
      process.env.KEEP_TMP = '1';
      throw new Error(`sanitizer reports in ${this.dir}:\n${reports.join('\n')}`);
    }
    if (!process.env.KEEP_TMP) rmSync(this.dir, { recursive: true, force: true });
    return code;
  }
}

// Send sanitizer reports of every process to files in the test's directory.
export function sanitizerEnv(dir) {
  return {
    ASAN_OPTIONS: `log_path=${dir}/asan:detect_leaks=1:abort_on_error=0`,
    UBSAN_OPTIONS: `log_path=${dir}/ubsan:print_stacktrace=1:halt_on_error=1`,
    LSAN_OPTIONS: `suppressions=${path.join(srcdir, 't/lsan.supp')}`,
  };
}

// Start a gateway with the given server entries (libconfig text each).
export async function startGateway({ servers, globals = '', wait = true, verbose = true, listen = '127.0.0.1:0' } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcps-test-'));
  const conf = path.join(dir, 'mcp-supervisord.conf');
  writeFileSync(conf, `listen = ${q(listen)};\ncontrol = ${q(path.join(dir, 'control.sock'))};\n${globals}\n` +
    `servers = (\n  ${servers.join(',\n  ')}\n);\n`);
  const log = openSync(path.join(dir, 'supervisord.log'), 'a');
  const args = ['-d', '-f', conf];
  if (verbose) args.unshift('-v');
  const child = spawn(bin.supervisord, args, {
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      ...sanitizerEnv(dir),
      MCP_SUPERVISOR_WORKER: bin.worker,
      PATH: `${path.dirname(bin.demo)}:${process.env.PATH}`,
    },
  });
  const gw = new Gateway(dir, child);
  live.add(gw);
  child.once('exit', (code) => { gw.exited = true; gw.exitCode = code; });
  // A gateway that does not start is stopped here: the caller gets no
  // handle on it, and its running child would keep the test process alive.
  try {
    const status = await gw.waitFor(() => true, 'control socket');
    gw.url = `http://${status.listen}/mcp`;
    gw.base = `http://${status.listen}`;
    if (wait) await gw.ready();
  } catch (e) {
    await gw.stop().catch(() => {});
    throw e;
  }
  return gw;
}

// Raw MCP over HTTP for tests that check the wire itself.
export async function post(gw, body, { session, headers = {}, raw = false } = {}) {
  const h = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  };
  if (session) h['mcp-session-id'] = session;
  const res = await fetch(gw.url, { method: 'POST', headers: h, body: typeof body === 'string' ? body : JSON.stringify(body) });
  if (raw) return res;
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: parseBody(res.headers.get('content-type'), text) };
}

// Parse a JSON body, or the JSON messages of an event stream.
export function parseBody(ctype, text) {
  if (!ctype) return undefined;
  if (ctype.startsWith('application/json')) return JSON.parse(text);
  if (ctype.startsWith('text/event-stream')) return parseSse(text).filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
  return undefined;
}

// Split an event stream into events {id, event, data}.
export function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    const ev = { data: [] };
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') ev.data.push(value);
      else ev[field] = value;
    }
    ev.data = ev.data.join('\n');
    events.push(ev);
  }
  return events;
}

// initialize + notifications/initialized over raw HTTP; returns the session id.
export async function rawSession(gw, capabilities = {}, version = '2025-11-25') {
  const r = await post(gw, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: version, capabilities, clientInfo: { name: 'raw-test', version: '1' } },
  });
  if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
  const session = r.headers.get('mcp-session-id');
  const n = await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { session });
  if (n.status !== 202) throw new Error(`initialized: ${n.status}`);
  return session;
}

// Start a Node program that serves on an ephemeral loopback port (through
// the loopback.mjs preload); resolves to {port, stop()} once it listens.
export async function startNodeServer(args, { env = {}, ms = 20000 } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcps-srv-'));
  const portFile = path.join(dir, 'port');
  const logFile = path.join(dir, 'log');
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', path.join(srcdir, 't/fixtures/loopback.mjs'), ...args], {
    detached: true,
    stdio: ['pipe', log, log],
    env: { ...process.env, PORT: '0', MCPS_PORT_FILE: portFile, ...env },
  });
  const entry = { pid: child.pid };
  live.add(entry);
  let exited = false;
  child.once('exit', () => { exited = true; });
  const until = Date.now() + ms;
  let port;
  while (Date.now() < until && !exited) {
    try { port = Number(readFileSync(portFile, 'utf8')); } catch { /* not yet */ }
    if (port) break;
    await sleep(50);
  }
  if (!port) {
    const why = `${args.join(' ')} did not start:\n${readFileSync(logFile, 'utf8')}`;
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    live.delete(entry);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(why);
  }
  return {
    port,
    child,
    log: () => readFileSync(logFile, 'utf8'),
    async stop() {
      if (!exited) {
        const done = new Promise((r) => child.once('exit', r));
        try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
        const t = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 5000);
        await done;
        clearTimeout(t);
      }
      live.delete(entry);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
