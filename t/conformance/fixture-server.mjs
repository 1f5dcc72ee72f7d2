#!/usr/bin/env node
// SPDX-License-Identifier: ISC
// Conformance fixture: the upstream MCP server that mcp-supervisor proxies when
// it is tested with the official conformance suite
// (@modelcontextprotocol/conformance, `server` mode).  It implements every
// tool / resource / prompt / utility the server scenarios exercise; see
// SCENARIOS.md next to this file for what each scenario checks.
//
// Usage:
//   node t/conformance/fixture-server.mjs        # MCP over stdio (for the gateway)
//   import { createFixtureServer } from './fixture-server.mjs'   # any transport
//
// Built on the low-level `Server` class of @modelcontextprotocol/sdk (1.32.x)
// rather than McpServer, so that tool input schemas go out exactly as written
// here (the json-schema-2020-12 scenario needs $schema/$defs/additionalProperties
// preserved verbatim) and every handler is visible in one place.
//
// Nothing here may write to stdout: in stdio mode stdout is the protocol channel.

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// ---------------------------------------------------------------------------
// Test media
// ---------------------------------------------------------------------------

// A 1x1 red RGB PNG (generated for this fixture with zlib; 8-bit truecolour).
export const PNG_1X1_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

// A tiny PCM WAV (mono, 8 kHz, 16-bit, 8 samples of silence), built from the
// RIFF layout so the bytes are easy to audit.
function makeWavBase64(samples = 8, rate = 8000) {
  const dataLen = samples * 2;
  const b = Buffer.alloc(44 + dataLen);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + dataLen, 4);
  b.write('WAVE', 8, 'ascii');
  b.write('fmt ', 12, 'ascii');
  b.writeUInt32LE(16, 16); // fmt chunk size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // channels
  b.writeUInt32LE(rate, 24); // sample rate
  b.writeUInt32LE(rate * 2, 28); // byte rate
  b.writeUInt16LE(2, 32); // block align
  b.writeUInt16LE(16, 34); // bits per sample
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(dataLen, 40);
  return b.toString('base64');
}
export const WAV_BASE64 = makeWavBase64();

// The json-schema-2020-12 scenario's schema: 2020-12 keywords a gateway
// must pass through untouched.
export const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: 'text', text: t });
const noArgs = { type: 'object', properties: {} };

// ---------------------------------------------------------------------------
// Tools (name -> { description, inputSchema, run(args, ctx) })
// ctx = { extra, request, log(level, data) }
// ---------------------------------------------------------------------------

const TOOLS = {
  // tools-call-simple-text
  test_simple_text: {
    description: 'Returns a single text content item',
    inputSchema: noArgs,
    run: async () => ({ content: [text('This is a simple text response for testing.')] }),
  },

  // tools-call-image
  test_image_content: {
    description: 'Returns a single image content item (1x1 PNG)',
    inputSchema: noArgs,
    run: async () => ({ content: [{ type: 'image', data: PNG_1X1_BASE64, mimeType: 'image/png' }] }),
  },

  // tools-call-audio (mimeType must be exactly audio/wav)
  test_audio_content: {
    description: 'Returns a single audio content item (WAV)',
    inputSchema: noArgs,
    run: async () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
  },

  // tools-call-embedded-resource
  test_embedded_resource: {
    description: 'Returns an embedded text resource',
    inputSchema: noArgs,
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },

  // tools-call-mixed-content: text + image + embedded resource
  test_multiple_content_types: {
    description: 'Returns text, image and embedded resource content together',
    inputSchema: noArgs,
    run: async () => ({
      content: [
        text('Multiple content types test:'),
        { type: 'image', data: PNG_1X1_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },

  // tools-call-with-logging: three notifications/message at level info,
  // ~50 ms apart, all sent before the result (on the request's stream).
  test_tool_with_logging: {
    description: 'Emits three info-level log notifications while running',
    inputSchema: noArgs,
    run: async (_args, { log }) => {
      await log('info', 'Tool execution started');
      await sleep(50);
      await log('info', 'Tool processing data');
      await sleep(50);
      await log('info', 'Tool execution completed');
      return { content: [text('Tool with logging executed successfully')] };
    },
  },

  // tools-call-error: a tool-level error (result with isError), not a JSON-RPC error
  test_error_handling: {
    description: 'Always fails with isError: true',
    inputSchema: noArgs,
    run: async () => ({
      isError: true,
      content: [text('This tool intentionally returns an error for testing')],
    }),
  },

  // tools-call-with-progress: progress 0, 50, 100 of 100 (~50 ms apart),
  // echoing the caller's _meta.progressToken; no notifications without a token.
  test_tool_with_progress: {
    description: 'Reports progress 0/50/100 of 100 when given a progressToken',
    inputSchema: noArgs,
    run: async (_args, { request, extra }) => {
      const token = request.params._meta?.progressToken;
      for (const [i, progress] of [0, 50, 100].entries()) {
        if (i > 0) await sleep(50);
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 100, message: `Step ${progress}/100` },
          });
        }
      }
      // Small gap before the result: the SDK client dispatches notifications a
      // microtask late, so a progress notification arriving in the same read
      // as the response (possible over stdio) would find its handler gone.
      await sleep(20);
      return { content: [text(`Progress test completed (token: ${token ?? 'none'})`)] };
    },
  },

  // tools-call-sampling: server->client sampling/createMessage during the call
  test_sampling: {
    description: 'Asks the client to sample an LLM completion for the given prompt',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
    run: async (args, { extra }) => {
      const res = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: text(String(args.prompt ?? '')) }],
            maxTokens: 100,
          },
        },
        CreateMessageResultSchema,
      );
      const reply = res.content?.type === 'text' ? res.content.text : JSON.stringify(res.content);
      return { content: [text(`LLM response: ${reply}`)] };
    },
  },

  // tools-call-elicitation: server->client elicitation/create with a two-field form
  test_elicitation: {
    description: 'Asks the client (user) for a username and email',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
    run: async (args, { extra }) =>
      elicit(extra, String(args.message ?? ''), {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      }, 'User response'),
  },

  // elicitation-sep1034-defaults: one field of each primitive type, each with a default
  test_elicitation_sep1034_defaults: {
    description: 'Elicitation whose schema carries defaults for every primitive type (SEP-1034)',
    inputSchema: noArgs,
    run: async (_args, { extra }) =>
      elicit(extra, 'Please review and update the form fields with defaults', {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: {
            type: 'string',
            description: 'User status',
            enum: ['active', 'inactive', 'pending'],
            default: 'active',
          },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      }),
  },

  // elicitation-sep1330-enums: the five enum shapes of SEP-1330
  test_elicitation_sep1330_enums: {
    description: 'Elicitation using every enum schema variant (SEP-1330)',
    inputSchema: noArgs,
    run: async (_args, { extra }) =>
      elicit(extra, 'Please pick from the enum fields', {
        type: 'object',
        properties: {
          // untitled single-select: plain enum, no oneOf/enumNames
          untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
          // titled single-select: oneOf of {const, title}, no enum
          titledSingle: {
            type: 'string',
            description: 'Titled single-select',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          // legacy titled: enum + enumNames of the same length
          legacyEnum: {
            type: 'string',
            description: 'Legacy titled enum',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          // untitled multi-select: array of items.enum
          untitledMulti: {
            type: 'array',
            description: 'Untitled multi-select',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          // titled multi-select: array of items.anyOf {const, title}
          titledMulti: {
            type: 'array',
            description: 'Titled multi-select',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
        required: [],
      }),
  },

  // json-schema-2020-12 (pending scenario): the listing must carry this schema
  // verbatim ($schema, $defs with an $anchor, $ref, allOf/anyOf, if/then/else,
  // additionalProperties:false).
  json_schema_2020_12_tool: {
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: JSON_SCHEMA_2020_12,
    run: async (args) => ({ content: [text(`Received: ${JSON.stringify(args)}`)] }),
  },

  // server-sse-polling (pending scenario, SEP-1699): the HTTP front is meant to
  // close the POST SSE stream mid-call and deliver this result after the client
  // reconnects with GET + Last-Event-ID.  When served by the SDK's HTTP
  // transport we ask it to close the stream (extra.closeSSEStream exists only
  // when it has an event store and the client speaks >= 2025-11-25); over stdio
  // the gateway has to do it.  Either way the result comes after a delay.
  test_reconnection: {
    description: 'Result is delayed so the HTTP front can close the SSE stream mid-call (SEP-1699)',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      extra.closeSSEStream?.();
      await sleep(RECONNECTION_DELAY_MS);
      return { content: [text('Reconnection test completed successfully')] };
    },
  },

  // http-custom-header-server-validation (conformance 0.2, pending): a
  // parameter a 2026-07-28 client mirrors in an Mcp-Param header.
  test_header_param: {
    description: 'Echoes a region given in the Mcp-Param-Region header too',
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] },
    run: async (args) => ({ content: [text(`region ${args.region}`)] }),
  },

  // The 2026-07-28 server scenarios (conformance 0.2) ask these the 2025
  // way, with requests during the call; the gateway turns them into
  // input_required results for a 2026-07-28 client, and keeps the state.

  // server-stateless: needs sampling, as a 2025 server would check it.
  test_missing_capability: {
    description: 'Needs the sampling capability',
    inputSchema: noArgs,
    run: async (_args, { extra, server }) => {
      if (!server.getClientCapabilities()?.sampling) throw new Error('Client does not support sampling');
      return { content: [text(`Sampled: ${await sample(extra, 'Say something', 50)}`)] };
    },
  },
  test_streaming_elicitation: {
    description: 'Asks for a name during the call',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      await ask(extra, 'What is your name?', { name: { type: 'string' } });
      return { content: [text('Streaming complete')] };
    },
  },
  test_logging_tool: {
    description: 'Logs one info message',
    inputSchema: noArgs,
    run: async (_args, { log }) => {
      await log('info', 'Diagnostic trace logging activated');
      return { content: [text('Logging evaluated')] };
    },
  },
  test_trigger_tool_change: {
    description: 'Adds a tool (tools list_changed)',
    inputSchema: noArgs,
    run: async (_args, { server }) => {
      const name = `test_added_tool_${added.tools.length + 1}`;
      added.tools.push(name);
      await server.sendToolListChanged();
      return { content: [text(`Mutation triggered: ${name}`)] };
    },
  },
  test_trigger_prompt_change: {
    description: 'Adds a prompt (prompts list_changed)',
    inputSchema: noArgs,
    run: async (_args, { server }) => {
      const name = `test_added_prompt_${added.prompts.length + 1}`;
      added.prompts.push(name);
      await server.sendPromptListChanged();
      return { content: [text(`Mutation triggered: ${name}`)] };
    },
  },
  test_input_required_result_elicitation: {
    description: 'Asks for a name',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      const r = await ask(extra, 'What is your name?', { name: { type: 'string' } }, ['name']);
      return { content: [text(`Hello, ${r.content?.name ?? r.action}!`)] };
    },
  },
  test_input_required_result_sampling: {
    description: 'Asks for a sample',
    inputSchema: noArgs,
    run: async (_args, { extra }) =>
      ({ content: [text(`Sampling result: ${await sample(extra, 'What is the capital of France?', 100)}`)] }),
  },
  test_input_required_result_list_roots: {
    description: 'Asks for the client roots',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      const { roots } = await extra.sendRequest({ method: 'roots/list', params: {} }, ListRootsResultSchema);
      return { content: [text(`Found ${roots.length} root(s): ${roots.map((x) => x.uri).join(' ')}`)] };
    },
  },
  test_input_required_result_request_state: {
    description: 'Asks for a confirmation',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      const r = await ask(extra, 'Please confirm', { ok: { type: 'boolean' } }, ['ok']);
      return { content: [text(r.content?.ok === true ? 'state-ok: confirmed' : `not confirmed (${r.action})`)] };
    },
  },
  test_input_required_result_multiple_inputs: {
    description: 'Asks for a name, a sample and the roots at once',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      const [who, greeting, { roots }] = await Promise.all([
        ask(extra, 'What is your name?', { name: { type: 'string' } }, ['name']),
        sample(extra, 'Generate a greeting', 50),
        extra.sendRequest({ method: 'roots/list', params: {} }, ListRootsResultSchema),
      ]);
      return { content: [text(`Name: ${who.content?.name}; Greeting: ${greeting}; Roots: ${roots.length}`)] };
    },
  },
  test_input_required_result_multi_round: {
    description: 'Asks for a name, then a colour',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      const who = await ask(extra, 'Step 1: What is your name?', { name: { type: 'string' } }, ['name']);
      const colour = await ask(extra, 'Step 2: What is your favorite color?', { color: { type: 'string' } }, ['color']);
      return { content: [text(`Multi-round complete for ${who.content?.name} who likes ${colour.content?.color}`)] };
    },
  },
  test_input_required_result_tampered_state: {
    description: 'Asks for a confirmation',
    inputSchema: noArgs,
    run: async (_args, { extra }) => {
      const r = await ask(extra, 'Please confirm', { ok: { type: 'boolean' } }, ['ok']);
      return { content: [text(`integrity-ok: ${r.action}`)] };
    },
  },
  test_input_required_result_capabilities: {
    description: 'Asks only for what the client declared',
    inputSchema: noArgs,
    run: async (_args, { extra, server }) => {
      const caps = server.getClientCapabilities() ?? {};
      const asked = [];
      if (caps.elicitation) asked.push(ask(extra, 'Elicitation input', { value: { type: 'string' } }, ['value']).then(() => 'elicit_input'));
      if (caps.sampling) asked.push(sample(extra, 'Sample request', 50).then(() => 'sample_input'));
      if (asked.length === 0) return { content: [text('No supported capabilities declared')] };
      return { content: [text(`capabilities-ok: received ${(await Promise.all(asked)).join(',')}`)] };
    },
  },
};

// What test_trigger_tool_change and test_trigger_prompt_change added.
const added = { tools: [], prompts: [] };

const RECONNECTION_DELAY_MS = Number(process.env.FIXTURE_RECONNECTION_DELAY_MS ?? 300);

// Sends elicitation/create (form mode) related to the current tool call and
// renders the answer.  The conformance checks inspect the *request*; the tool
// only has to return some content.
async function elicit(extra, message, requestedSchema, label = 'Elicitation completed') {
  const res = await extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } },
    ElicitResultSchema,
  );
  return {
    content: [text(`${label}: action=${res.action}, content=${JSON.stringify(res.content ?? {})}`)],
  };
}

// One form elicitation related to the current call; returns the ElicitResult.
async function ask(extra, message, properties, required = []) {
  return extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties, required } } },
    ElicitResultSchema,
  );
}

// One sampling request related to the current call; returns its text.
async function sample(extra, prompt, maxTokens) {
  const res = await extra.sendRequest(
    { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: text(prompt) }], maxTokens } },
    CreateMessageResultSchema,
  );
  return res.content?.type === 'text' ? res.content.text : JSON.stringify(res.content);
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

// resources-list / resources-read-text / resources-read-binary / resources-(un)subscribe
export const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    description: 'A static text resource',
    mimeType: 'text/plain',
    read: () => ({ text: 'This is the content of the static text resource.' }),
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    description: 'A static binary resource (1x1 PNG)',
    mimeType: 'image/png',
    read: () => ({ blob: PNG_1X1_BASE64 }),
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    description: 'A resource that can be subscribed to',
    mimeType: 'text/plain',
    read: () => ({ text: 'Watched resource content' }),
  },
];

// resources-templates-read: test://template/{id}/data, {id} echoed in the JSON body
export const TEMPLATE = {
  uriTemplate: 'test://template/{id}/data',
  name: 'template-data',
  description: 'Per-id JSON data; {id} is substituted into the content',
  mimeType: 'application/json',
  match: /^test:\/\/template\/([^/]+)\/data$/,
};

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

export const PROMPTS = {
  // prompts-get-simple
  test_simple_prompt: {
    description: 'A simple prompt without arguments',
    arguments: [],
    get: () => [{ role: 'user', content: text('This is a simple prompt for testing.') }],
  },
  // prompts-get-with-args (+ target of completion-complete)
  test_prompt_with_arguments: {
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: (a) => [
      { role: 'user', content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) },
    ],
  },
  // prompts-get-embedded-resource
  test_prompt_with_embedded_resource: {
    description: 'A prompt embedding the resource named by resourceUri',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: (a) => [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user', content: text('Please process the embedded resource above.') },
    ],
  },
  // prompts-get-with-image
  test_prompt_with_image: {
    description: 'A prompt containing an image',
    arguments: [],
    get: () => [
      { role: 'user', content: { type: 'image', data: PNG_1X1_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  },
};

// completion-complete: candidate values per (ref, argument); filtered by prefix.
export const COMPLETIONS = {
  'ref/prompt:test_prompt_with_arguments:arg1': ['paris', 'park', 'party', 'test', 'testing'],
  'ref/prompt:test_prompt_with_arguments:arg2': ['red', 'green', 'blue', 'test'],
  'ref/resource:test://template/{id}/data:id': ['1', '2', '3', '123'],
};

// ---------------------------------------------------------------------------
// Server construction
// ---------------------------------------------------------------------------

/**
 * Builds a fresh, unconnected Server.  One instance per connection: an SDK
 * Server can only be connected to one transport at a time.
 */
export function createFixtureServer() {
  const server = new Server(
    { name: 'mcp-supervisor-conformance-fixture', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      instructions: 'Conformance fixture for mcp-supervisor tests.',
      // Ask the client only for what it declared, as a careful server
      // does: sampling, elicitation and roots need the capability.
      enforceStrictCapabilities: true,
    },
  );

  // logging-set-level: remember the level and filter our own log notifications.
  // (Replaces the SDK's built-in handler so the filter works with any transport.)
  const LEVELS = LoggingLevelSchema.options; // debug .. emergency, in severity order
  let minLevel; // unset: send everything
  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    minLevel = req.params.level;
    return {};
  });
  const logger = (extra) => async (level, data) => {
    if (minLevel && LEVELS.indexOf(level) < LEVELS.indexOf(minLevel)) return;
    await extra.sendNotification({
      method: 'notifications/message',
      params: { level, logger: 'conformance-fixture', data },
    });
  };

  // tools-list and every tools-call-* scenario
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...Object.entries(TOOLS).map(([name, t]) => ({
        name,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
      ...added.tools.map((name) => ({ name, description: 'Added by test_trigger_tool_change', inputSchema: noArgs })),
    ],
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (added.tools.includes(request.params.name)) return { content: [text(`${request.params.name} called`)] };
    const tool = TOOLS[request.params.name];
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
    try {
      return await tool.run(request.params.arguments ?? {}, { request, extra, server, log: logger(extra) });
    } catch (err) {
      // e.g. the client refused sampling/elicitation: report as a tool error
      return { isError: true, content: [text(`Tool ${request.params.name} failed: ${err?.message ?? err}`)] };
    }
  });

  // resources-list
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: RESOURCES.map(({ read, ...r }) => r),
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      { uriTemplate: TEMPLATE.uriTemplate, name: TEMPLATE.name, description: TEMPLATE.description, mimeType: TEMPLATE.mimeType },
    ],
  }));

  // resources-read-text / resources-read-binary / resources-templates-read
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const r = RESOURCES.find((x) => x.uri === uri);
    if (r) return { contents: [{ uri, mimeType: r.mimeType, ...r.read() }] };
    const m = TEMPLATE.match.exec(uri);
    if (m) {
      const id = decodeURIComponent(m[1]);
      return {
        contents: [
          {
            uri,
            mimeType: TEMPLATE.mimeType,
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    }
    throw new McpError(-32002, 'Resource not found', { uri });
  });

  // resources-subscribe / resources-unsubscribe: track URIs, answer {}
  const subscriptions = new Set();
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  // prompts-list / prompts-get-*
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      ...Object.entries(PROMPTS).map(([name, p]) => ({
        name,
        description: p.description,
        arguments: p.arguments,
      })),
      { name: 'test_input_required_result_prompt', description: 'A prompt that asks for context first', arguments: [] },
      ...added.prompts.map((name) => ({ name, description: 'Added by test_trigger_prompt_change', arguments: [] })),
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    if (added.prompts.includes(request.params.name)) return { messages: [{ role: 'user', content: text(request.params.name) }] };
    // input-required-result-non-tool-request (conformance 0.2): a prompt
    // that asks the client first.
    if (request.params.name === 'test_input_required_result_prompt') {
      const r = await ask(extra, 'What context should the prompt use?', { context: { type: 'string' } }, ['context']);
      return { messages: [{ role: 'user', content: text(`Prompt with context: ${r.content?.context ?? r.action}`) }] };
    }
    const p = PROMPTS[request.params.name];
    if (!p) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const args = request.params.arguments ?? {};
    for (const a of p.arguments) {
      if (a.required && args[a.name] === undefined) {
        throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${a.name}`);
      }
    }
    return { description: p.description, messages: p.get(args) };
  });

  // completion-complete: any ref gets an answer (empty when unknown)
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    const key = `${ref.type}:${ref.type === 'ref/prompt' ? ref.name : ref.uri}:${argument.name}`;
    const values = (COMPLETIONS[key] ?? []).filter((v) => v.startsWith(argument.value ?? ''));
    return { completion: { values, total: values.length, hasMore: false } };
  });

  return server;
}

// ---------------------------------------------------------------------------
// Run over stdio when executed directly
// ---------------------------------------------------------------------------

function isMain() {
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const server = createFixtureServer();
  server.onerror = (err) => process.stderr.write(`fixture: ${err?.stack ?? err}\n`);
  await server.connect(new StdioServerTransport());
  process.stderr.write('fixture: conformance fixture ready on stdio\n');
}
