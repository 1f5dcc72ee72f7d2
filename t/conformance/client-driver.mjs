// SPDX-License-Identifier: ISC
// The conformance suite's client mode drives the gateway's upstream side:
// the suite starts a test server and runs this driver with the server's
// URL (scenario in MCP_CONFORMANCE_SCENARIO).  The driver starts the
// gateway with that URL as an "http" upstream, connects an SDK client to
// the gateway, and does what the scenario asks of a client.  Everything
// the test server sees comes from the gateway's worker.
//
// The client declares no elicitation capability, so an elicitation from
// the upstream is answered by the upstream's next strategy, "defaults".
// The list ends in "decline", so the gateway can always answer and tells
// the upstream it offers elicitation.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, q } from '../lib/gateway.mjs';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const calls = {
  tools_call: { name: 'add_numbers', arguments: { a: 5, b: 3 } },
  'elicitation-sep1034-client-defaults': { name: 'test_client_elicitation_defaults', arguments: {} },
  'sse-retry': { name: 'test_reconnection', arguments: {} },
};

const gw = await startGateway({
  servers: [`{ name = "conformance"; transport = "http"; url = ${q(url)}; prefix = ""; elicitation = [ "client", "defaults", "decline" ]; }`],
});
let status = 0;
try {
  const client = new Client({ name: 'mcp-supervisor-conformance-driver', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
  if (calls[scenario]) {
    const r = await client.callTool(calls[scenario]);
    console.log(JSON.stringify(r));
    if (r.isError) status = 1;
  }
  await client.close();
} catch (e) {
  console.error(`driver: ${e.stack ?? e}`);
  console.error(gw.log());
  status = 1;
}
await gw.stop();
process.exit(status);
