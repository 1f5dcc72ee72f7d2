#!/usr/bin/env node
// SPDX-License-Identifier: ISC
// Conformance fixture on the SDK v2 (@modelcontextprotocol/server 2.4.0):
// a strict 2026-07-28 upstream implementing what the server scenarios of
// the conformance suite (0.2.x, requirement sets 2025-11-25 and
// 2026-07-28) call, so the gateway can be judged fronting a modern
// server.  The 2025 feature scenarios get the same tools, resources and
// prompts as fixture-server.mjs (the SDK v1 fixture), asked for the
// 2026 way: sampling and elicitation are input_required results, which
// the gateway turns into requests to a 2025 client.  See SCENARIOS.md.
//
// usage: node fixture-modern.mjs      serves on 127.0.0.1, an ephemeral
//        port; prints {"url": "..."} on stdout, and ends when its stdin
//        closes (so it never outlives its test) or on SIGTERM.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  McpServer, ResourceTemplate, createMcpHandler, createRequestStateCodec, fromJsonSchema,
  inputRequired, inputResponse, acceptedContent, hostHeaderValidationResponse, originValidationResponse,
  localhostAllowedHostnames, localhostAllowedOrigins,
} from '@modelcontextprotocol/server';
import {
  PNG_1X1_BASE64, WAV_BASE64, JSON_SCHEMA_2020_12, RESOURCES, TEMPLATE, PROMPTS, COMPLETIONS,
} from './fixture-server.mjs';

// requestState is sealed (HMAC) and expires; a tampered one is refused by
// the SDK before a handler runs.
const codec = createRequestStateCodec({ key: `conformance-modern-${randomBytes(16).toString('hex')}`, ttlSeconds: 600 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: 'text', text: t });
const done = (t) => ({ content: [text(t)] });
const obj = (properties = {}, required = []) => fromJsonSchema({ type: 'object', properties, required });

// Tools and prompts added by the test_trigger_* tools, for every later
// request (each request gets a fresh McpServer from the factory).
const addedTools = [];
const addedPrompts = [];
let handler;

// The elicitation the input_required tools ask for.
const askName = (message = 'What is your name?') => inputRequired.elicit({
  message,
  requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
});
const askConfirm = () => inputRequired.elicit({
  message: 'Please confirm',
  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
});
const askSampling = (prompt, maxTokens = 100) => inputRequired.createMessage({
  messages: [{ role: 'user', content: text(prompt) }], maxTokens,
});
const samplingText = (r) => (r.kind === 'sampling' && r.result.content?.type === 'text' ? r.result.content.text : JSON.stringify(r));

function tools(server) {
  const tool = (name, description, schema, run) => server.registerTool(name, { description, inputSchema: schema ?? obj() }, run);

  tool('test_simple_text', 'Returns a single text content item', null,
    async () => done('This is a simple text response for testing.'));
  tool('test_image_content', 'Returns a single image content item (1x1 PNG)', null,
    async () => ({ content: [{ type: 'image', data: PNG_1X1_BASE64, mimeType: 'image/png' }] }));
  tool('test_audio_content', 'Returns a single audio content item (WAV)', null,
    async () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }));
  tool('test_embedded_resource', 'Returns an embedded text resource', null, async () => ({
    content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
  }));
  tool('test_multiple_content_types', 'Returns text, image and embedded resource content together', null, async () => ({
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG_1X1_BASE64, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
    ],
  }));
  tool('test_error_handling', 'Always fails with isError: true', null,
    async () => ({ isError: true, content: [text('This tool intentionally returns an error for testing')] }));

  // Logs go only to a request whose envelope set a level (the SDK's rule).
  tool('test_tool_with_logging', 'Emits three info-level log notifications while running', null, async (_a, ctx) => {
    await ctx.mcpReq.log('info', 'Tool execution started');
    await sleep(50);
    await ctx.mcpReq.log('info', 'Tool processing data');
    await sleep(50);
    await ctx.mcpReq.log('info', 'Tool execution completed');
    return done('Tool with logging executed successfully');
  });
  tool('test_logging_tool', 'Logs one info message (only to a request that set a level)', null, async (_a, ctx) => {
    await ctx.mcpReq.log('info', 'Diagnostic trace logging activated');
    return done('Logging evaluated');
  });
  tool('test_tool_with_progress', 'Reports progress 0/50/100 of 100 when given a progressToken', null, async (_a, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const [i, progress] of [0, 50, 100].entries()) {
      if (i > 0) await sleep(50);
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message: `Step ${progress}/100` } });
      }
    }
    return done(`Progress test completed (token: ${token ?? 'none'})`);
  });

  // Sampling and elicitation, the 2026 way.
  tool('test_sampling', 'Asks the client to sample an LLM completion for the given prompt',
    obj({ prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, ['prompt']), async ({ prompt }, ctx) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'sample');
      if (r.kind === 'sampling') return done(`LLM response: ${samplingText(r)}`);
      return inputRequired({ inputRequests: { sample: askSampling(String(prompt)) } });
    });
  tool('test_elicitation', 'Asks the client (user) for a username and email',
    obj({ message: { type: 'string', description: 'The message to show the user' } }, ['message']), async ({ message }, ctx) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'user');
      if (r.kind === 'elicit') return done(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
      return inputRequired({
        inputRequests: {
          user: inputRequired.elicit({
            message: String(message),
            requestedSchema: {
              type: 'object',
              properties: {
                username: { type: 'string', description: "User's response" },
                email: { type: 'string', description: "User's email address" },
              },
              required: ['username', 'email'],
            },
          }),
        },
      });
    });
  const elicitForm = (name, description, message, properties) => tool(name, description, null, async (_a, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'form');
    if (r.kind === 'elicit') return done(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    return inputRequired({ inputRequests: { form: inputRequired.elicit({ message, requestedSchema: { type: 'object', properties, required: [] } }) } });
  });
  elicitForm('test_elicitation_sep1034_defaults', 'Elicitation whose schema carries defaults for every primitive type (SEP-1034)',
    'Please review and update the form fields with defaults', {
      name: { type: 'string', description: 'User name', default: 'John Doe' },
      age: { type: 'integer', description: 'User age', default: 30 },
      score: { type: 'number', description: 'User score', default: 95.5 },
      status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', description: 'Verification status', default: true },
    });
  elicitForm('test_elicitation_sep1330_enums', 'Elicitation using every enum schema variant (SEP-1330)',
    'Please pick from the enum fields', {
      untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
      titledSingle: {
        type: 'string', description: 'Titled single-select',
        oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }],
      },
      legacyEnum: { type: 'string', description: 'Legacy titled enum', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
      untitledMulti: { type: 'array', description: 'Untitled multi-select', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
      titledMulti: {
        type: 'array', description: 'Titled multi-select',
        items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] },
      },
    });

  tool('json_schema_2020_12_tool', 'Tool with JSON Schema 2020-12 features', fromJsonSchema(JSON_SCHEMA_2020_12),
    async (args) => done(`Received: ${JSON.stringify(args)}`));
  // http-custom-header-server-validation (pending): a parameter mirrored
  // in an Mcp-Param header, which the server's front checks.
  tool('test_header_param', 'Echoes a region given in the Mcp-Param-Region header too',
    obj({ region: { type: 'string', 'x-mcp-header': 'Region' } }, ['region']), async ({ region }) => done(`region ${region}`));
  tool('test_reconnection', 'Result is delayed (SEP-1699)', null, async () => {
    await sleep(300);
    return done('Reconnection test completed successfully');
  });

  // server-stateless: a tool that needs sampling refuses a client that
  // did not declare it.
  // server-stateless: a tool that needs sampling.  The SDK refuses to ask
  // a client that did not declare it (-32021).
  tool('test_missing_capability', 'Needs the sampling capability', null, async (_a, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'sample');
    if (r.kind === 'sampling') return done(`Sampled: ${samplingText(r)}`);
    return inputRequired({ inputRequests: { sample: askSampling('Say something') } });
  });
  tool('test_streaming_elicitation', 'Asks for input mid-call (never as a request of its own)', null, async (_a, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
    if (r.kind === 'elicit') return done('Streaming complete');
    return inputRequired({ inputRequests: { user_name: askName() } });
  });
  tool('test_trigger_tool_change', 'Adds a tool (tools list_changed)', null, async () => {
    addedTools.push(`test_added_tool_${addedTools.length + 1}`);
    handler.notify.toolsChanged();
    return done(`Mutation triggered: ${addedTools.at(-1)}`);
  });
  tool('test_trigger_prompt_change', 'Adds a prompt (prompts list_changed)', null, async () => {
    addedPrompts.push(`test_added_prompt_${addedPrompts.length + 1}`);
    handler.notify.promptsChanged();
    return done(`Mutation triggered: ${addedPrompts.at(-1)}`);
  });
  for (const name of addedTools) tool(name, 'Added by test_trigger_tool_change', null, async () => done(`${name} called`));

  // SEP-2322: the input_required tools.
  tool('test_input_required_result_elicitation', 'input_required: asks for a name', null, async (_a, ctx) => {
    const who = acceptedContent(ctx.mcpReq.inputResponses, 'user_name');
    if (typeof who?.name === 'string') return done(`Hello, ${who.name}!`);
    return inputRequired({ inputRequests: { user_name: askName() } });
  });
  tool('test_input_required_result_sampling', 'input_required: asks for a sample', null, async (_a, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
    if (r.kind === 'sampling') return done(`Sampling result: ${samplingText(r)}`);
    return inputRequired({ inputRequests: { capital_question: askSampling('What is the capital of France?') } });
  });
  tool('test_input_required_result_list_roots', 'input_required: asks for roots', null, async (_a, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
    if (r.kind === 'roots') return done(`Found ${r.roots.length} root(s): ${r.roots.map((x) => x.uri).join(' ')}`);
    return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
  });
  tool('test_input_required_result_request_state', 'input_required with requestState', null, async (_a, ctx) => {
    const state = ctx.mcpReq.requestState();
    const ok = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
    if (state?.kind === 'request-state' && ok?.ok === true) return done('state-ok: requestState validated');
    return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await codec.mint({ kind: 'request-state' }) });
  });
  tool('test_input_required_result_multiple_inputs', 'input_required: elicitation, sampling and roots at once', null, async (_a, ctx) => {
    const state = ctx.mcpReq.requestState();
    const who = acceptedContent(ctx.mcpReq.inputResponses, 'user_name');
    const greeting = inputResponse(ctx.mcpReq.inputResponses, 'greeting');
    const roots = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
    if (state?.kind === 'multiple-inputs' && who && greeting.kind === 'sampling' && roots.kind === 'roots') {
      return done(`Name: ${who.name}; Greeting: ${samplingText(greeting)}; Roots: ${roots.roots.length}`);
    }
    return inputRequired({
      inputRequests: { user_name: askName(), greeting: askSampling('Generate a greeting', 50), client_roots: inputRequired.listRoots() },
      requestState: await codec.mint({ kind: 'multiple-inputs' }),
    });
  });
  tool('test_input_required_result_multi_round', 'input_required over two rounds', null, async (_a, ctx) => {
    const state = ctx.mcpReq.requestState();
    if (state?.round === 1) {
      const who = acceptedContent(ctx.mcpReq.inputResponses, 'step1');
      if (typeof who?.name === 'string') {
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: 'Step 2: What is your favorite color?',
              requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
            }),
          },
          requestState: await codec.mint({ round: 2, name: who.name }),
        });
      }
    }
    if (state?.round === 2) {
      const color = acceptedContent(ctx.mcpReq.inputResponses, 'step2');
      if (typeof color?.color === 'string') return done(`Multi-round complete for ${state.name} who likes ${color.color}`);
    }
    return inputRequired({ inputRequests: { step1: askName('Step 1: What is your name?') }, requestState: await codec.mint({ round: 1 }) });
  });
  tool('test_input_required_result_tampered_state', 'input_required with sealed requestState', null, async (_a, ctx) => {
    const state = ctx.mcpReq.requestState();
    if (state?.kind === 'tamper-test' && acceptedContent(ctx.mcpReq.inputResponses, 'confirm')) return done('integrity-ok: state verified');
    return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await codec.mint({ kind: 'tamper-test' }) });
  });
  tool('test_input_required_result_capabilities', 'input_required: asks only for what the client declared', null, async (_a, ctx) => {
    const caps = ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities'] ?? {};
    const got = Object.keys(ctx.mcpReq.inputResponses ?? {});
    if (got.length > 0) return done(`capabilities-ok: received ${got.join(',')}`);
    const inputRequests = {};
    if (caps.elicitation) {
      inputRequests.elicit_input = inputRequired.elicit({
        message: 'Elicitation input', requestedSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
      });
    }
    if (caps.sampling) inputRequests.sample_input = askSampling('Sample request', 50);
    if (Object.keys(inputRequests).length === 0) return done('No supported capabilities declared');
    return inputRequired({ inputRequests });
  });
}

function resources(server) {
  for (const r of RESOURCES) {
    server.registerResource(r.name, r.uri, { description: r.description, mimeType: r.mimeType },
      async (uri) => ({ contents: [{ uri: uri.href ?? String(uri), mimeType: r.mimeType, ...r.read() }] }));
  }
  server.registerResource(TEMPLATE.name, new ResourceTemplate(TEMPLATE.uriTemplate, { list: undefined }),
    { description: TEMPLATE.description, mimeType: TEMPLATE.mimeType }, async (uri, { id }) => ({
      contents: [{ uri: uri.href ?? String(uri), mimeType: TEMPLATE.mimeType, text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }));
}

function prompts(server) {
  for (const [name, p] of Object.entries(PROMPTS)) {
    const properties = Object.fromEntries(p.arguments.map((a) => [a.name, { type: 'string', description: a.description }]));
    const required = p.arguments.filter((a) => a.required).map((a) => a.name);
    if (p.arguments.length === 0) {
      server.registerPrompt(name, { description: p.description }, async () => ({ messages: p.get({}) }));
    } else {
      server.registerPrompt(name, { description: p.description, argsSchema: obj(properties, required) },
        async (args) => ({ messages: p.get(args) }));
    }
  }
  server.registerPrompt('test_input_required_result_prompt', { description: 'A prompt that asks for context first' }, async (ctx) => {
    const c = acceptedContent(ctx.mcpReq.inputResponses, 'user_context');
    if (typeof c?.context === 'string') return { messages: [{ role: 'user', content: text(`Prompt with context: ${c.context}`) }] };
    return inputRequired({
      inputRequests: {
        user_context: inputRequired.elicit({
          message: 'What context should the prompt use?',
          requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
        }),
      },
    });
  });
  for (const name of addedPrompts) {
    server.registerPrompt(name, { description: 'Added by test_trigger_prompt_change' }, async () => ({ messages: [{ role: 'user', content: text(name) }] }));
  }
}

function factory() {
  const server = new McpServer({ name: 'mcp-supervisor-conformance-modern', version: '2.4.0' }, {
    capabilities: {
      tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true },
      logging: {}, completions: {},
    },
    requestState: { verify: codec.verify },
  });
  tools(server);
  resources(server);
  prompts(server);
  // completion-complete: candidates per (ref, argument), filtered by prefix.
  server.server.setRequestHandler('completion/complete', async (request) => {
    const { ref, argument } = request.params;
    const key = `${ref.type}:${ref.type === 'ref/prompt' ? ref.name : ref.uri}:${argument.name}`;
    const values = (COMPLETIONS[key] ?? []).filter((v) => v.startsWith(argument.value ?? ''));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  return server;
}

// Stop when the test that started us goes away.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
process.stdin.resume();

handler = createMcpHandler(factory, { legacy: 'reject' });
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x)); else if (v !== undefined) headers.set(k, v);
  }
  const ac = new AbortController();
  res.on('close', () => { if (!res.writableEnded) ac.abort(); });
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body, signal: ac.signal,
  });
  let response;
  try {
    // DNS rebinding: loopback Host and Origin only.
    response = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
      originValidationResponse(request, localhostAllowedOrigins()) ?? await handler.fetch(request);
  } catch (e) {
    res.writeHead(500).end(String(e));
    return;
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) { res.end(); return; }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      res.write(value);
    }
  } catch { /* the client went away */ }
  res.end();
});
httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${httpServer.address().port}/mcp` })}\n`);
});
