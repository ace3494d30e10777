/**
 * An editor for the ACP tests: spawns `bub acp` and talks to it with the official SDK's
 * client side, recording every `session/update` and answering permission requests with
 * whatever the test chose.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

/** A running `bub acp` with the SDK client connected to it. */
export interface AcpEditor {
  readonly agent: acp.ClientContext;
  /** Every update received, in order, with its session. */
  readonly updates: { sessionId: string; update: acp.SessionUpdate }[];
  /** Every permission request received. */
  readonly permissionRequests: acp.RequestPermissionRequest[];
  /** How the next permission requests are answered (default: allow). */
  answer: (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse;
  /** What `bub acp` wrote on stderr so far. */
  stderr(): string;
  /** Closes its stdin and waits for it to exit; resolves with its exit code. */
  close(): Promise<number | null>;
}

/** Spawns `command args` (a `bub acp`), connects, and sends `initialize`. */
export async function startAcpEditor(command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<AcpEditor & { initialized: acp.InitializeResponse }> {
  const child: ChildProcessWithoutNullStreams = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const updates: AcpEditor["updates"] = [];
  const permissionRequests: acp.RequestPermissionRequest[] = [];
  const editor = {
    updates,
    permissionRequests,
    answer: (_request: acp.RequestPermissionRequest): acp.RequestPermissionResponse => ({ outcome: { outcome: "selected", optionId: "allow" } }),
  };
  const app = acp
    .client({ name: "test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push({ sessionId: params.sessionId, update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissionRequests.push(params);
      return editor.answer(params);
    });
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  const initialized = await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  return Object.assign(editor, {
    agent: connection.agent,
    initialized,
    stderr: () => stderr,
    async close() {
      child.stdin.end();
      const code = await exited;
      connection.close();
      return code;
    },
  });
}

/** The text of the agent's message chunks for one session. */
export function messageText(editor: AcpEditor, sessionId: string): string {
  return editor.updates
    .filter((item) => item.sessionId === sessionId && item.update.sessionUpdate === "agent_message_chunk")
    .map((item) => {
      const update = item.update as { content: { type: string; text?: string } };
      return update.content.type === "text" ? (update.content.text ?? "") : "";
    })
    .join("");
}
