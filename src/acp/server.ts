/**
 * bub as an Agent Client Protocol agent (`bub acp`): an editor talks to it over stdio. Each
 * ACP session is a bub session (`acp:<uuid>`, its own tape); each prompt is one turn, whose
 * streamed text, reasoning and tool calls become `session/update` notifications;
 * `session/cancel` aborts the turn's signal; with `BUB_APPROVAL=ask` the approval policy's
 * questions become `session/request_permission` requests.
 */
import { randomUUID } from "node:crypto";
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { ChannelMessage } from "../channels/message.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../kernel/approval.ts";
import type { Envelope } from "../kernel/envelope.ts";
import { describeError } from "../kernel/errors.ts";
import type { BubFramework } from "../kernel/framework.ts";
import { createLogger } from "../kernel/log.ts";
import { AsyncStreamEvents, type StreamEvent } from "../kernel/stream.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import { MODEL_OPTION_ID, modelConfigOptions } from "./models.ts";
import { promptText, toolKind, toolLocations, toolTitle, updatesFor, type StreamedCall } from "./updates.ts";

const log = createLogger("bub:acp");

/** What {@link serveAcp} needs. */
export interface AcpServerOptions {
  /** The framework a session whose working folder is `cwd` runs in. */
  frameworkFor(cwd: string): Promise<BubFramework>;
  /** What the editor writes (the agent's stdin) and where the agent answers (its stdout). */
  readonly input: ReadableStream<Uint8Array>;
  readonly output: WritableStream<Uint8Array>;
  /** bub's version, for `initialize`. */
  readonly version: string;
}

interface Session {
  readonly id: string;
  readonly cwd: string;
  readonly framework: BubFramework;
  task: AbortController | null;
  /** The calls of the step being run (for matching results and approval questions). */
  readonly calls: { current: StreamedCall[] };
  /** Ids of calls already asked about in this step. */
  readonly asked: Set<string>;
  /** Errors the turn reported (through `onError` outbounds). */
  errors: string[];
  /** The model the editor chose through `session/set_config_option`, if any. */
  model: string | null;
}

/** The abort reason of a turn the editor cancelled; named `AbortError`, as cancellations are. */
function cancelledByEditor(): Error {
  const error = new Error("cancelled by the editor (session/cancel)");
  error.name = "AbortError";
  return error;
}

/** The call an approval question is about: the first not yet asked with the same tool and arguments. */
function callFor(session: Session, request: ApprovalRequest): StreamedCall | null {
  const same = (call: StreamedCall) => call.name === request.tool && !session.asked.has(call.id);
  const args = JSON.stringify(request.arguments);
  return session.calls.current.find((call) => same(call) && JSON.stringify(call.args) === args) ?? session.calls.current.find(same) ?? null;
}

/**
 * Serves one editor connection until it closes (the editor closed our stdin, or the
 * connection failed); running turns are cancelled then.
 */
export async function serveAcp(options: AcpServerOptions): Promise<void> {
  const sessions = new Map<string, Session>();
  /** The frameworks the server's plugin is registered on, and how to take it off again. */
  const bound = new Map<BubFramework, () => void>();
  /** Turns still running, waited for when the connection closes (their tapes are written). */
  const running = new Set<Promise<unknown>>();
  let client: acp.AgentContext | null = null;

  const sessionOf = (message: Envelope): Session | undefined => sessions.get(message.sessionId ?? "");
  const notify = async (sessionId: string, update: acp.SessionUpdate) => {
    try {
      await client?.notify(acp.methods.client.session.update, { sessionId, update });
    } catch (error) {
      log.debug(`acp.update.failed session_id=${sessionId}`, error);
    }
  };

  // The server is the channel of its sessions' turns: a plugin on each framework it runs them in.
  const plugin: BubPlugin = {
    name: "acp",
    async dispatchOutbound({ message }) {
      const session = sessionOf(message);
      if (!session) return false;
      // Errors a turn failed with come from onError, which puts the error in the context.
      if (message.kind === "error" && "_error" in message.context) session.errors.push(message.content);
      return true;
    },
    // A prompt's stream becomes session/update notifications (not the streams of model-option turns).
    async runModelStream({ sessionId, signal }, next) {
      const stream = await next();
      const session = sessions.get(sessionId);
      if (!stream || !session || session.task?.signal !== signal) return stream;
      const forwarded = async function* (): AsyncGenerator<StreamEvent> {
        for await (const event of stream) {
          if (event.kind === "tool_call") session.asked.clear();
          for (const update of updatesFor(event, session.calls, session.cwd)) await notify(session.id, update);
          yield event;
        }
      };
      return new AsyncStreamEvents(forwarded(), stream.state);
    },
    async askApproval({ request, signal }): Promise<ApprovalAnswer | null> {
      const session = sessions.get(request.sessionId);
      if (!session || !client) return null;
      const call = callFor(session, request);
      if (call) session.asked.add(call.id);
      const toolCallId = call?.id ?? `approval_${randomUUID()}`;
      const response = await client.request(
        acp.methods.client.session.requestPermission,
        {
          sessionId: session.id,
          toolCall: {
            toolCallId,
            title: `${toolTitle(request.tool, request.arguments)} (${request.reason})`,
            kind: toolKind(request.tool),
            status: "pending",
            rawInput: request.arguments,
            locations: toolLocations(request.arguments, session.cwd),
          },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        },
        { cancellationSignal: signal },
      );
      if (response.outcome.outcome === "selected" && response.outcome.optionId === "allow") return { approved: true, by: "editor" };
      return { approved: false, by: "editor" };
    },
  };

  const app = acp
    .agent({ name: "bub" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => ({
      protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
      },
      agentInfo: { name: "bub", title: "Bub", version: options.version },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      if (!isAbsolute(params.cwd)) throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
      const framework = await options.frameworkFor(params.cwd);
      if (!bound.has(framework)) bound.set(framework, framework.runtime.register(plugin, "acp"));
      const id = `acp:${randomUUID()}`;
      sessions.set(id, { id, cwd: framework.workspace, framework, task: null, calls: { current: [] }, asked: new Set(), errors: [], model: null });
      log.info(`acp.session.new session_id=${id} cwd=${framework.workspace}`);
      // bub's MCP servers come from mcp.json (docs/mcp.md); the editor's list is not used.
      if (params.mcpServers.length > 0) log.warn(`acp.session.new session_id=${id}: the editor's ${params.mcpServers.length} MCP server(s) are not used; list them in <BUB_HOME>/mcp.json or the workspace's .mcp.json`);
      const configOptions = await modelConfigOptions(framework, id, null);
      return configOptions.length > 0 ? { sessionId: id, configOptions } : { sessionId: id };
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw acp.RequestError.invalidParams({ sessionId: params.sessionId }, "unknown session; start one with session/new");
      if (params.configId !== MODEL_OPTION_ID || typeof params.value !== "string") throw acp.RequestError.invalidParams({ configId: params.configId }, `unknown option; this agent offers '${MODEL_OPTION_ID}'`);
      // The same check and tape event as typing `,model <id>` in the session.
      const inbound = new ChannelMessage({ sessionId: session.id, channel: "acp", chatId: session.id, content: `,model ${params.value}`, context: { sender_id: "editor" } });
      const result = await session.framework.running(() => session.framework.processInbound(inbound));
      if (result.context.commandFailed) throw acp.RequestError.invalidParams({ value: params.value }, result.modelOutput.trim());
      session.model = params.value;
      return { configOptions: await modelConfigOptions(session.framework, session.id, session.model) };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw acp.RequestError.invalidParams({ sessionId: params.sessionId }, "unknown session; start one with session/new");
      if (session.task) throw acp.RequestError.invalidRequest({ sessionId: params.sessionId }, "a prompt is already running in this session");
      const inbound = new ChannelMessage({ sessionId: session.id, channel: "acp", chatId: session.id, content: promptText(params.prompt), context: { sender_id: "editor" } });
      const task = new AbortController();
      session.task = task;
      session.errors = [];
      const framework = session.framework;
      const turn = framework.running(() => framework.processInbound(inbound, { signal: task.signal }));
      const settled = turn.then(() => undefined, () => undefined);
      running.add(settled);
      void settled.then(() => running.delete(settled));
      try {
        await turn;
      } catch (error) {
        if (task.signal.aborted) return { stopReason: "cancelled" as const };
        throw new acp.RequestError(-32603, describeError(error));
      } finally {
        session.task = null;
        session.calls.current = [];
      }
      if (task.signal.aborted) return { stopReason: "cancelled" as const };
      if (session.errors.length > 0) throw new acp.RequestError(-32603, session.errors.join("\n"));
      return { stopReason: "end_turn" as const };
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const task = sessions.get(params.sessionId)?.task;
      if (task && !task.signal.aborted) {
        log.info(`acp.session.cancel session_id=${params.sessionId}`);
        task.abort(cancelledByEditor());
      }
    });

  const connection = app.connect(acp.ndJsonStream(options.output, options.input));
  client = connection.client;
  try {
    await connection.closed;
  } finally {
    for (const session of sessions.values()) session.task?.abort(cancelledByEditor());
    await Promise.all(running);
    for (const unregister of bound.values()) unregister();
  }
}
