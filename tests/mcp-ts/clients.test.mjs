// Drives the official TypeScript MCP clients against a live garm plane:
// @modelcontextprotocol/client 2.x in 'auto' and 'legacy' negotiation, and
// @modelcontextprotocol/sdk 1.x. The plane is started, and this file run,
// by the Go test TestTypeScriptMCPClients (examples/devstack), which passes
// the stack's URLs and the bank's demo in GARM_MCP_FIXTURE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const fx = JSON.parse(readFileSync(process.env.GARM_MCP_FIXTURE, 'utf8'));

async function token(p) {
  const url = `${fx.idp}/token?user=${p.user}` + (p.as ? `&as=${p.as}` : '');
  const r = await fetch(url);
  assert.equal(r.status, 200, `a token for ${p.user}`);
  return r.text();
}

async function overHTTP(route, tok, body, headers = {}) {
  const r = await fetch(fx.http + route, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tok}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

const kinds = {
  'client 2.x, auto': (tok) => connect(new ClientV2({ name: 'garm-ts-v2-auto', version: '1' }, { versionNegotiation: { mode: 'auto' } }), new TransportV2(new URL(fx.mcp), { requestInit: { headers: { Authorization: `Bearer ${tok}` } } })),
  'client 2.x, legacy': (tok) => connect(new ClientV2({ name: 'garm-ts-v2-legacy', version: '1' }, { versionNegotiation: { mode: 'legacy' } }), new TransportV2(new URL(fx.mcp), { requestInit: { headers: { Authorization: `Bearer ${tok}` } } })),
  'sdk 1.x': (tok) => connect(new ClientV1({ name: 'garm-ts-v1', version: '1' }), new TransportV1(new URL(fx.mcp), { requestInit: { headers: { Authorization: `Bearer ${tok}` } } })),
};

async function connect(client, transport) {
  await client.connect(transport);
  return client;
}

async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

// callOutcome is a call's result, or the JSON-RPC error it was refused with.
async function callOutcome(client, params) {
  try {
    return { result: await client.callTool(params) };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

for (const [kind, open] of Object.entries(kinds)) {
  test(`${kind}: each persona's tools/list is its ListTools, tool for tool and schema for schema`, async () => {
    for (const [who, p] of Object.entries(fx.personas)) {
      const tok = await token(p);
      const listed = (await overHTTP(fx.listRoute, tok, {})).body.tools;
      const client = await open(tok);
      try {
        const tools = await listAll(client);
        assert.deepEqual(tools.map((t) => t.name), listed.map((t) => t.fqn), `${who}: the names`);
        tools.forEach((t, i) => {
          assert.deepEqual(t.inputSchema, listed[i].input_schema, `${who}: ${t.name}'s schema`);
          assert.equal(t.title, listed[i].title);
          assert.equal(t._meta['dev.garm/approval_mode'], listed[i].approval_mode);
        });
      } finally {
        await client.close();
      }
    }
  });

  test(`${kind}: redactions over MCP equal those over HTTP`, async () => {
    for (const who of fx.seesCustomer) {
      const tok = await token(fx.personas[who]);
      const http = await overHTTP(fx.customerRoute, tok, fx.customerArgs);
      assert.equal(http.status, 200);
      const client = await open(tok);
      try {
        const res = await client.callTool({ name: fx.customerTool, arguments: fx.customerArgs });
        assert.ok(!res.isError, `${who}: ${JSON.stringify(res)}`);
        assert.deepEqual(res.structuredContent, http.body, `${who}: structuredContent`);
        assert.deepEqual(JSON.parse(res.content[0].text), http.body, `${who}: the text block`);
        assert.match(res._meta['dev.garm/event_id'], /^[0-9a-f-]{36}$/);
      } finally {
        await client.close();
      }
    }
  });

  test(`${kind}: an invisible tool and an unknown one answer the same`, async () => {
    const client = await open(await token(fx.personas[fx.outsider]));
    try {
      const invisible = await callOutcome(client, { name: fx.customerTool, arguments: fx.customerArgs });
      const unknown = await callOutcome(client, { name: 'accounts.v1.no_such_tool', arguments: fx.customerArgs });
      assert.ok(invisible.error, JSON.stringify(invisible));
      assert.deepEqual(invisible, unknown);
    } finally {
      await client.close();
    }
  });

  test(`${kind}: a payment without a grant is refused, and with one succeeds exactly once`, async () => {
    const client = await open(await token(fx.personas[fx.treasurer]));
    try {
      const refused = await client.callTool({ name: fx.paymentTool, arguments: fx.paymentArgs });
      assert.equal(refused.isError, true);
      assert.equal(refused.structuredContent.code, 'grant_required');
      assert.deepEqual(refused.structuredContent.material_fields, fx.materialFields);
      // The approver approves the payment in the approvals inbox; the fixture answers its grant.
      const g = await fetch(fx.approve, { method: 'POST' });
      assert.equal(g.status, 200);
      const grant = await g.text();
      const withGrant = { name: fx.paymentTool, arguments: fx.paymentArgs, _meta: { 'dev.garm/grant': grant } };
      const paid = await client.callTool(withGrant);
      assert.ok(!paid.isError, JSON.stringify(paid));
      assert.equal(paid.structuredContent.payment.status, 'PAYMENT_STATUS_PENDING');
      const again = await client.callTool(withGrant);
      assert.equal(again.isError, true);
      assert.equal(again.structuredContent.code, 'permission_denied');
    } finally {
      await client.close();
    }
  });
}
