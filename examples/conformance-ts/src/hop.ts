// The hop contract (docs/hop-contract.md), implemented from that document
// alone on the NATS services API. Nothing here is specific to the
// conformance contract: a tool service registers its tools with serve().

import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { NatsConnection, Service, ServiceMsg } from "nats";
import { InvocationContextSchema, type InvocationContext } from "./gen/garm/tool/v1/invocation_pb.js";

// §3: the header, its size bound, §5: the refusal codes and the message bound.
const INVOCATION_HEADER = "Garm-Invocation";
const MAX_INVOCATION_HEADER = 64 << 10;
const REFUSAL_CODES = new Set(["400", "403", "404", "409", "415", "422", "429", "502", "504"]);
const MAX_ERROR_MESSAGE = 4 << 10;

/** A tool's refusal: a code and a message (§5). */
export class Refusal extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** What a handler is given besides its request. */
export interface Call {
  invocation: InvocationContext;
  /** Aborted at the invocation's deadline, or when a drain gives up waiting. */
  signal: AbortSignal;
  /** The handler's deadline in ms since the epoch, or undefined. */
  deadline?: number;
}

export interface Tool<I extends DescMessage, O extends DescMessage> {
  method: string; // "Echo"
  input: I;
  output: O;
  handle(req: MessageShape<I>, call: Call): Promise<MessageShape<O> | undefined | null>;
}

export interface Contract {
  service: string; // the proto service's full name
  descriptorHash: string;
  contractVersion: string;
}

class BadInvocation extends Error {}

// §3: exactly one header, canonical standard padded base64, a valid
// InvocationContext with a call_id and a valid deadline.
function decodeInvocation(values: string[]): InvocationContext {
  if (values.length !== 1) throw new BadInvocation(`${values.length} headers`);
  const value = values[0];
  if (value === "" || value.length > MAX_INVOCATION_HEADER) throw new BadInvocation("empty or too long");
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)) {
    throw new BadInvocation("not standard padded base64");
  }
  const raw = Buffer.from(value, "base64");
  if (raw.toString("base64") !== value) throw new BadInvocation("not canonical base64");
  const inv = fromBinary(InvocationContextSchema, raw);
  if (inv.callId === "") throw new BadInvocation("no call_id");
  const d = inv.deadline;
  if (d && (d.seconds < -62135596800n || d.seconds > 253402300799n || d.nanos < 0 || d.nanos > 999_999_999)) {
    throw new BadInvocation("invalid deadline");
  }
  return inv;
}

// §4.4: undeclared fields at any depth are refused.
function hasUnknownFields(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasUnknownFields);
  if (v === null || typeof v !== "object" || v instanceof Uint8Array) return false;
  const o = v as Record<string, unknown>;
  if (Array.isArray(o.$unknown) && o.$unknown.length > 0) return true;
  return Object.entries(o).some(([k, x]) => k !== "$unknown" && hasUnknownFields(x));
}

// §5: one line of valid UTF-8, trimmed, at most 4 KiB.
function cleanMessage(s: string): string {
  let out = s.toWellFormed().split(/[\r\n]+/).filter((p) => p !== "").join(" ").trim();
  const bytes = Buffer.from(out, "utf8");
  if (bytes.length > MAX_ERROR_MESSAGE) {
    out = new TextDecoder().decode(bytes.subarray(0, MAX_ERROR_MESSAGE)).replace(/\uFFFD$/, "");
  }
  return out;
}

// §5: what a handler's outcome is answered with.
function errorAnswer(err: unknown): [string, string] {
  if (err instanceof Refusal) {
    const message = cleanMessage(err.message);
    if (REFUSAL_CODES.has(err.code)) return [err.code, message || err.code];
    return ["500", message || "internal error"];
  }
  const text = err instanceof Error ? err.message : String(err);
  return ["500", cleanMessage(text) || "internal error"];
}

/** A running service: stop() drains it (§6). */
export interface Served {
  drain(timeoutMs: number): Promise<void>;
}

export async function serve(
  nc: NatsConnection,
  contract: Contract,
  version: string,
  tools: Tool<DescMessage, DescMessage>[],
): Promise<Served> {
  let draining = false;
  let running = 0;
  let idle: (() => void) | undefined;
  const cancelAll = new AbortController();
  const queue = contract.service; // §1
  const svc: Service = await nc.services.add({
    name: contract.service.replaceAll(".", "_"),
    version,
    description: `${contract.service} in TypeScript`,
    // nats.js refuses a dotted queue name in the service's config; the
    // queue group is set on each endpoint instead, where it is not checked.
    metadata: { "garm.identity": contract.descriptorHash, "garm.contract_version": contract.contractVersion },
  });

  const answer = async (tool: Tool<DescMessage, DescMessage>, msg: ServiceMsg) => {
    if (!msg.reply) return; // §3: nobody can receive an answer
    let inv: InvocationContext;
    try {
      inv = decodeInvocation(msg.headers?.values(INVOCATION_HEADER) ?? []);
    } catch {
      msg.respondError(400, "missing invocation context");
      return;
    }
    if (draining) {
      msg.respondError(503, "shutting down");
      return;
    }
    let deadline: number | undefined;
    if (inv.deadline) {
      deadline = Number(inv.deadline.seconds) * 1000 + inv.deadline.nanos / 1e6;
      if (deadline <= Date.now()) {
        msg.respondError(429, "overloaded: queued past its deadline");
        return;
      }
    }
    let req;
    try {
      req = fromBinary(tool.input, msg.data);
      if (hasUnknownFields(req)) throw new Error("undeclared fields");
    } catch {
      msg.respondError(400, "request does not match the contract this service implements");
      return;
    }
    running++;
    // The deadline bounds the handler (§4.5); a timer cannot wait longer
    // than 2^31-1 ms, so a deadline further away than that has none.
    const bounded = new AbortController();
    const onCancel = () => bounded.abort(cancelAll.signal.reason);
    cancelAll.signal.addEventListener("abort", onCancel, { once: true });
    const wait = deadline === undefined ? undefined : Math.ceil(deadline - Date.now());
    const timer = wait !== undefined && wait <= 0x7fffffff
      ? setTimeout(() => bounded.abort(new Error("deadline")), Math.max(0, wait))
      : undefined;
    try {
      const out = await tool.handle(req, { invocation: inv, signal: bounded.signal, deadline });
      if (out === undefined || out === null) {
        msg.respondError(500, "handler returned no response and no error");
      } else {
        msg.respond(toBinary(tool.output, out));
      }
    } catch (err) {
      const [code, message] = errorAnswer(err);
      msg.respondError(Number(code), message);
    } finally {
      clearTimeout(timer);
      cancelAll.signal.removeEventListener("abort", onCancel);
      running--;
      if (draining && running === 0) idle?.();
    }
  };

  for (const tool of tools) {
    const subject = `${contract.service}.${tool.method}`;
    svc.addEndpoint(subject.replaceAll(".", "_"), {
      subject,
      queue,
      handler: (err, msg) => {
        if (!err) void answer(tool, msg);
      },
    });
  }

  return {
    async drain(timeoutMs: number) {
      draining = true;
      await svc.stop();
      if (running > 0) {
        const done = new Promise<void>((resolve) => (idle = resolve));
        const timer = setTimeout(() => cancelAll.abort(new Error("drain timeout")), timeoutMs);
        await done;
        clearTimeout(timer);
      }
      await nc.flush();
    },
  };
}
