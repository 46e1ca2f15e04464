// A garm tool service in TypeScript serving garm.conformance.v1 exactly as
// docs/hop-contract.md §7 specifies each tool. It serves on $NATS_URL until
// SIGTERM or SIGINT, then drains and exits 0.

import { create, type DescMessage } from "@bufbuild/protobuf";
import { connect } from "nats";
import { CONTRACT } from "./contract.js";
import * as c from "./gen/garm/conformance/v1/conformance_pb.js";
import { Refusal, serve, type Tool } from "./hop.js";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    if (signal.aborted) return resolve(true);
    const timer = ms > 0 ? setTimeout(() => resolve(false), ms) : undefined;
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });

const tools = [
  { method: "Echo", input: c.EchoRequestSchema, output: c.EchoResponseSchema,
    handle: async (req: c.EchoRequest) => create(c.EchoResponseSchema, { text: req.text, data: req.data }) },
  { method: "Refuse", input: c.RefuseRequestSchema, output: c.RefuseResponseSchema,
    handle: async (req: c.RefuseRequest) => { throw new Refusal(req.code ?? "", req.message ?? ""); } },
  { method: "Fail", input: c.FailRequestSchema, output: c.FailResponseSchema,
    handle: async (req: c.FailRequest) => { throw new Error(req.message ?? ""); } },
  { method: "Nothing", input: c.NothingRequestSchema, output: c.NothingResponseSchema,
    handle: async () => undefined },
  { method: "Sleep", input: c.SleepRequestSchema, output: c.SleepResponseSchema,
    handle: async (req: c.SleepRequest, call) => {
      const start = Date.now();
      const cut = await sleep(req.millis ?? 0, call.signal);
      return create(c.SleepResponseSchema, { cutShort: cut, sleptMillis: Date.now() - start });
    } },
  { method: "Inspect", input: c.InspectRequestSchema, output: c.InspectResponseSchema,
    handle: async (_req: c.InspectRequest, call) => {
      const inv = call.invocation;
      const a = inv.attribution;
      return create(c.InspectResponseSchema, {
        callId: inv.callId, tenant: a?.tenant ?? "", app: a?.app ?? "", runId: a?.runId ?? "",
        correlationId: a?.correlationId ?? "", causationId: a?.causationId ?? "", budgetId: a?.budgetId ?? "",
        feature: a?.feature ?? "", tags: a?.tags ?? {},
        principalSubject: inv.principal?.subject ?? "", principalKind: inv.principal?.kind ?? 0,
        actSubjects: inv.act.map((x) => x.subject), scopes: inv.scopes,
        traceparent: inv.traceparent, tracestate: inv.tracestate, idempotencyKey: inv.idempotencyKey,
        contractVersion: inv.contractVersion, grantJti: inv.grantJti, agent: inv.agent,
        deadlineUnixMillis: inv.deadline ? BigInt(inv.deadline.seconds) * 1000n + BigInt(Math.floor(inv.deadline.nanos / 1e6)) : 0n,
        handlerRemainingMillis: call.deadline !== undefined ? BigInt(Math.floor(call.deadline - Date.now())) : -1n,
      });
    } },
] as Tool<DescMessage, DescMessage>[];

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222", name: "conformance-ts" });
const served = await serve(nc, CONTRACT, "1.0.0", tools);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await served.drain(10_000);
  await nc.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
