// SPDX-License-Identifier: ISC
// The conformance suite's client mode judges the gateway as an MCP client:
// the suite starts a scenario server and runs this driver with its URL
// (the scenario in MCP_CONFORMANCE_SCENARIO, the protocol revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION, test data in MCP_CONFORMANCE_CONTEXT).
// The driver starts mcp-supervisord, with default settings, with that URL
// as an "http" upstream, and is an ordinary SDK client of the gateway that
// uses everything it is offered: it lists and calls every tool (with the
// arguments the context gives, else ones made from the schema), reads
// every resource, gets every prompt, and answers sampling, elicitation
// (accepting, the SDK filling in schema defaults) and roots.  Everything
// the scenario server sees comes from the gateway's worker.
//
// The client is the SDK v1 (a 2025-11-25 session) for the dated
// revisions; for 2026-07-28 it is the SDK v2 pinned to 2026-07-28, or
// with MCPS_DRIVER_CLIENT=v1 the SDK v1 again, so that the gateway
// bridges a 2025 client to the 2026-07-28 scenario server.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { startGateway, q, sleep } from '../lib/gateway.mjs';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '2025-11-25';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const modern = revision === '2026-07-28' && process.env.MCPS_DRIVER_CLIENT !== 'v1';
const log = (...a) => console.log(`driver[${scenario}]:`, ...a);

// A value of a JSON Schema's type, for required arguments and fields.
function sample(schema = {}) {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.oneOf) && schema.oneOf[0]?.const !== undefined) return schema.oneOf[0].const;
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case 'integer': case 'number': return 1;
    case 'boolean': return true;
    case 'array': return [];
    case 'object': return args(schema);
    default: return schema.pattern ? 'a' : 'conformance';
  }
}

// Arguments with every required property of an object schema.
function args(schema = {}) {
  const out = {};
  for (const name of schema.required ?? []) out[name] = sample(schema.properties?.[name]);
  return out;
}

const answers = {
  sampling: () => ({
    role: 'assistant', content: { type: 'text', text: 'This is a test response from the client' },
    model: 'test-model', stopReason: 'endTurn',
  }),
  // Required fields get a value; the SDK fills in the defaults of the rest.
  elicitation: (params) => ({ action: 'accept', content: args(params.requestedSchema) }),
  roots: () => ({ roots: [{ uri: 'file:///tmp/conformance', name: 'conformance' }] }),
};

const capabilities = { sampling: {}, elicitation: { form: { applyDefaults: true } }, roots: { listChanged: true } };

async function connect(gatewayUrl) {
  const info = { name: 'mcp-supervisor-conformance-driver', version: '1.0.0' };
  if (modern) {
    const client = new ClientV2(info, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    client.setRequestHandler('sampling/createMessage', async () => answers.sampling());
    client.setRequestHandler('elicitation/create', async (req) => answers.elicitation(req.params));
    client.setRequestHandler('roots/list', async () => answers.roots());
    await client.connect(new TransportV2(new URL(gatewayUrl)));
    return client;
  }
  const client = new ClientV1(info, { capabilities });
  client.setRequestHandler(CreateMessageRequestSchema, async () => answers.sampling());
  client.setRequestHandler(ElicitRequestSchema, async (req) => answers.elicitation(req.params));
  client.setRequestHandler(ListRootsRequestSchema, async () => answers.roots());
  await client.connect(new TransportV1(new URL(gatewayUrl)));
  return client;
}

// Log the gateway in to the scenario's server, as an operator would, and
// wait for the upstream to be ready with its tokens.
let logins = 0;
async function login() {
  logins++;
  const r = await gw.login('conformance');
  log(`mcpctl login: exit ${r.code}: ${r.stdout.trim().split('\n').slice(1).join(' ')}${r.stderr.trim()}`);
  const until = Date.now() + 20000;
  while (Date.now() < until) {
    const up = gw.upstream('conformance');
    if (up?.state === 'ready' || up?.state === 'failed') break;
    await sleep(100);
  }
}

// Use what the gateway offers; a refusal is logged and the next item tried.
// A call refused for want of a login (a scope step-up) gets one login,
// twice at most in a run, and is tried again.
async function exercise(client) {
  const attempt = async (what, fn) => {
    for (;;) {
      try {
        const r = await fn();
        log(`${what}: ${JSON.stringify(r).slice(0, 300)}`);
        return r;
      } catch (e) {
        log(`${what} failed: ${e.message}`);
        if (!/needs a login/.test(e.message) || logins >= 3) return undefined;
        await login();
      }
    }
  };
  const { tools = [] } = await attempt('tools/list', () => client.listTools()) ?? {};
  const given = [...context.toolCalls ?? []];
  // json-schema-2020-12-preservation: hand back the schema as received.
  const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
  if (focal) given.push({ name: 'json_schema_echo', arguments: { schema: focal.inputSchema } });
  for (const tool of tools) {
    const calls = given.filter((c) => c.name === tool.name);
    for (const c of calls.length > 0 ? calls : [{ name: tool.name, arguments: args(tool.inputSchema) }]) {
      await attempt(`tools/call ${c.name}`, () => client.callTool(c));
    }
  }
  const { resources = [] } = await attempt('resources/list', () => client.listResources()) ?? {};
  for (const r of resources) await attempt(`resources/read ${r.uri}`, () => client.readResource({ uri: r.uri }));
  const { prompts = [] } = await attempt('prompts/list', () => client.listPrompts()) ?? {};
  for (const p of prompts) {
    const a = Object.fromEntries((p.arguments ?? []).filter((x) => x.required).map((x) => [x.name, 'conformance']));
    await attempt(`prompts/get ${p.name}`, () => client.getPrompt({ name: p.name, arguments: a }));
  }
}

// The auth scenarios judge the gateway as an OAuth client of the
// scenario's server.  The client credentials extension's get their client
// as the upstream's pre-registered client with that grant; the others
// need a login: the driver is the operator, running mcpctl login and
// being the browser (the scenario's authorization server answers at once
// with a redirect to the gateway's callback).  auth/pre-registration
// gives a client; the others register one (Dynamic Client Registration,
// or the Client ID Metadata Document the suite's reference client
// names, when the server takes those).  Secrets reach the gateway as
// references, as the configuration demands: never written in the file.
const auth = scenario.startsWith('auth/');
const credentials = scenario.startsWith('auth/client-credentials');
let oauth = '';
if (auth && context.client_id && context.client_secret) {
  process.env.MCPS_CONFORMANCE_SECRET = context.client_secret;
  oauth = `oauth = { client_id = ${q(context.client_id)}; client_secret = "\${env:MCPS_CONFORMANCE_SECRET}";` +
    `${credentials ? ' grant = "client_credentials";' : ''} };`;
}
const globals = auth && !credentials
  ? 'oauth_client = { client_metadata_url = "https://conformance-test.local/client-metadata.json"; };'
  : '';
const gw = await startGateway({
  servers: [`{ name = "conformance"; transport = "http"; url = ${q(url)}; prefix = ""; ${oauth} }`],
  globals,
  wait: false,
});
// The suite stops a driver that runs too long with SIGTERM: the gateway
// goes with it.
let stopping;
const stop = async (status) => {
  stopping ??= gw.stop().catch((e) => { console.error(`driver: ${e.message}`); status = 1; });
  await stopping;
  process.exit(status);
};
process.on('SIGTERM', () => stop(1));
process.on('SIGINT', () => stop(1));

let status = 0;
try {
  // An upstream the gateway cannot reach stays out of the catalog: after
  // its second failed start the driver goes on with what there is.  (One
  // failure can be the scenario's: request-metadata refuses the first
  // request of all.)  One that waits for a login gets one, and again if
  // it waits for one after the calls (its server moved, say): three at
  // most in a run.
  const until = Date.now() + 20000;
  let up;
  while (Date.now() < until) {
    up = gw.upstream('conformance');
    if (['ready', 'failed', 'login'].includes(up?.state) || up?.failures >= 2) break;
    await sleep(100);
  }
  log(`upstream ${up?.state ?? 'unknown'} era ${up?.era ?? '-'} (${up?.last_error ?? 'no error'}); ` +
    `client ${modern ? 'SDK v2 (2026-07-28)' : 'SDK v1'}`);
  if (up?.state === 'login') await login();
  const client = await connect(gw.url);
  await exercise(client);
  while (gw.upstream('conformance')?.state === 'login' && logins < 3) {
    await login();
    await exercise(client);
  }
  await client.close();
} catch (e) {
  console.error(`driver: ${e.stack ?? e}`);
  status = 1;
}
if (status !== 0 || process.env.MCPS_DRIVER_LOG) console.error(gw.log());
await stop(status);
