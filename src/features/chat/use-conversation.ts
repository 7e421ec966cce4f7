import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { runTurn } from "../../chat/agent";
import { NEW_TITLE, type ChatMessage, type Conversation, type ModelRef, type Usage } from "../../model/conversation";
import { runCode } from "../../execution/run-code";
import { jupyterBackend } from "../../execution/jupyter/backend";
import { jupyterServer, restartJupyterKernel } from "../../execution/jupyter/server";
import { chosenModel, createProvider, noSandboxReason, sandboxChoice } from "../../providers";
import { sessionConfig } from "../../runtime/session-config";
import { getSession } from "../../runtime/use-python-session";
import { loadInterpreterState, saveInterpreterState, saveMessage } from "../../storage/conversations";
import { readMessages } from "../../storage/read-off-thread";
import { storageFailure } from "../../storage/db";
import { keptValues, leaveKept, saveKept } from "../../storage/kept-saves";
import { PYTHON_VERSION, type Settings } from "../../storage/settings";
import { getSessionFiles } from "../../runtime/session-files";
import type { PythonSession } from "../../runtime/python-session";
import type { SessionSnapshot } from "../../../workers/python-api";
import { announceSaved, onNote, useConversationLock } from "./conversation-lock";
import { restoreVariables } from "../restore-variables";

/** Conversations whose interpreter was already brought back on this page. */
const restoredOnThisPage = new Set<string>();

/** The answer being given in each conversation on this page: its Stop, and its end (every save done). */
const answering = new Map<string, { controller: AbortController; ended: Promise<void> }>();

/**
 * Stops the answer being given in a conversation, if any (its Python run too), and resolves once
 * it has ended and saved what it got to. Called before a conversation is deleted, so that
 * nothing of it is written back (nor any more requests sent), and when its view closes.
 */
export async function stopAnswering(conversationId: string): Promise<void> {
  const answer = answering.get(conversationId);
  answer?.controller.abort();
  await answer?.ended;
}

/**
 * Messages as the page saved them, made whole again where a page closed mid-answer: an answer
 * still streaming and a cell still running were cut off (shown, and sent to the model, as
 * stopped), and are saved so.
 */
async function loadWhole(conversationId: string): Promise<ChatMessage[]> {
  const loaded = await loadWithKept(conversationId);
  return loaded.map((message) => {
    const cut = message.status === "streaming" || message.cells?.some((cell) => cell.status === "running");
    if (!cut) return message;
    const whole: ChatMessage = {
      ...message,
      ...(message.status === "streaming" && { status: "stopped" as const }),
      ...(message.cells && { cells: message.cells.map((cell) => (cell.status === "running" ? { ...cell, status: "interrupted" as const } : cell)) }),
    };
    saveAnswer(whole);
    return whole;
  });
}

/** The messages as saved, and those storage refused (newer than what it holds), which are written once it can. */
async function loadWithKept(conversationId: string): Promise<ChatMessage[]> {
  const stored = await readMessages(conversationId);
  const kept = new Map(keptValues<ChatMessage>(`${conversationId}:message:`).map((message) => [message.id, message]));
  return [...stored.filter((message) => !kept.has(message.id)), ...kept.values()].sort((a, b) => a.seq - b.seq);
}

/** An answer (a model's message), saved whole; its last save tells a tab that follows this conversation, also when written on a retry. */
function saveAnswer(message: ChatMessage, final = false) {
  void saveKept(`${message.conversationId}:message:${message.id}`, "an answer", message, async (value) => {
    await saveMessage(value);
    if (final) announceSaved(value.conversationId);
  });
}

export interface ConversationView {
  session: PythonSession;
  messages: ChatMessage[];
  busy: boolean;
  /** A line about retries, the interpreter coming back, or a failure outside any message. */
  notice: string;
  /** The saved messages are shown: until then nothing is sent (it would go without them, numbered as if first). */
  loaded: boolean;
  /** Another tab continues this conversation: this one shows it read-only, as that one saves it. */
  elsewhere: boolean;
  /** Continue the conversation in this tab instead (the other one stops its answer and turns read-only). */
  takeOver: () => void;
  /** Waiting for the other tab to stop its answer and save it, after `takeOver`. */
  takingOver: boolean;
  /** False when the message could not be saved: then it is not sent either (the notice says why). */
  send: (text: string) => Promise<boolean>;
  retry: () => Promise<void>;
  stop: () => void;
  /** A fresh interpreter for this conversation, and a restart of its kernel on the Jupyter server: every variable is gone. */
  restart: () => Promise<void>;
}

const STREAM_SAVE_INTERVAL_MS = 250;

function saveVariables(conversationId: string, snapshot: SessionSnapshot) {
  void saveKept(`${conversationId}:variables`, "this conversation's Python variables", snapshot, (value) => saveInterpreterState(conversationId, value));
}

/** Shown when no provider is set up. */
export const NO_MODEL = "Add an API key (or a local model server) in Settings to chat.";

/**
 * One conversation: its messages (saved to IndexedDB as they stream), its interpreter
 * (restored after a reload), and the agent loop.
 */
export function useConversation(
  conversationId: string,
  /** Whether this conversation's Python may use the network (off unless the person allows it). */
  pythonNetwork: boolean,
  /** The conversation's model choice (the default model when absent). */
  modelChoice: ModelRef | undefined,
  settings: Settings,
  /** Apply a change to this conversation (it is saved by the owner). */
  onConversationChange: (id: string, change: (conversation: Conversation) => Conversation) => void,
): ConversationView {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState("");
  /** Why the saved messages could not be read: shown while it holds, whatever else is said meanwhile. */
  const [unreadable, setUnreadable] = useState("");
  const lastSaved = useRef(new Map<string, number>());
  const config = useMemo(
    () => sessionConfig(settings, { allowInput: false, network: pythonNetwork }),
    [settings, pythonNetwork],
  );
  const scope = `chat:${conversationId}`;
  const session = getSession(scope, config);
  const files = getSessionFiles(scope, session);
  const id = conversationId;
  const { hold, takeOver, isHere } = useConversationLock(id, () => stopAnswering(id));
  useEffect(() => session.configure(config), [session, config]);

  useEffect(() => {
    if (hold === "waiting") return;
    let cancelled = false;
    const unread = (error: unknown) => {
      if (!cancelled) setUnreadable(`This conversation could not be read from the browser's storage (${storageFailure(error)}), so nothing can be sent in it yet. Reload the page to try again.`);
    };
    if (hold !== "here") {
      // Followed as the other tab saves it; its interpreter is brought back again if this tab takes over.
      restoredOnThisPage.delete(id);
      // That tab's Python holds the newer variables: this tab's are not written over them (answers, each its own, still are).
      leaveKept(id, ["variables"], false);
      const load = () =>
        void loadWithKept(id).then((loaded) => {
          if (cancelled) return;
          setMessages(loaded);
          setUnreadable("");
        }, unread);
      load();
      const stopFollowing = onNote("saved", id, load);
      return () => {
        cancelled = true;
        setLoaded(false);
        stopFollowing();
      };
    }
    leaveKept(id, ["variables"], true);
    // An answer that this conversation's last view left is stopped with it; its last save comes first.
    void stopAnswering(id)
      .then(() => loadWhole(id))
      .then((loaded) => {
        if (cancelled) return;
        setMessages(loaded);
        setUnreadable("");
        setLoaded(true);
      }, unread);
    void restoreVariables({
      session,
      id,
      restored: restoredOnThisPage,
      what: "conversation",
      load: () => loadInterpreterState(id),
      save: (snapshot) => saveVariables(id, snapshot),
      say: (text) => !cancelled && setNotice(text),
    });
    return () => {
      cancelled = true;
      // Read again when this tab holds the conversation again (another tab may have added to it meanwhile).
      setLoaded(false);
      // Another conversation is opened: the answer being given here stops, kept as far as it got.
      answering.get(id)?.controller.abort();
    };
  }, [hold, id, session]);

  const update = useCallback((message: ChatMessage, final: boolean) => {
    setMessages((current) => {
      const index = current.findIndex((m) => m.id === message.id);
      const copy = { ...message, content: message.content.map((b) => ({ ...b })) };
      return index < 0 ? [...current, copy] : current.map((m, i) => (i === index ? copy : m));
    });
    const now = performance.now();
    if (final || now - (lastSaved.current.get(message.id) ?? 0) > STREAM_SAVE_INTERVAL_MS) {
      lastSaved.current.set(message.id, now);
      saveAnswer(message, final);
    }
  }, []);

  const turn = useCallback(
    async (history: ChatMessage[]) => {
      const model = chosenModel(settings, modelChoice);
      const provider = model && createProvider(settings, model.provider, scope);
      if (!model || !provider) {
        setNotice(NO_MODEL);
        return;
      }
      // Taken over by another tab meanwhile (while the message was being saved): that tab answers it.
      if (!isHere()) return;
      const sandbox = sandboxChoice(provider);
      const jupyter = jupyterBackend(settings.jupyter, scope, { allowInput: false, outputLimitBytes: config.outputLimitBytes });
      const controller = new AbortController();
      let end = () => undefined as void;
      const answer = { controller, ended: new Promise<void>((resolve) => (end = resolve)) };
      answering.set(id, answer);
      setBusy(true);
      let seq = history.length ? history[history.length - 1].seq : 0;
      let usage: Usage = { inputTokens: 0, outputTokens: 0 };
      /** A "Retrying in …" line is shown: it goes once the answer has ended, however it ended. */
      let retrying = false;
      try {
        await runTurn({
          conversationId: id,
          history: [...history],
          provider,
          model: model.model,
          maxTokens: settings.maxTokens,
          runCode: async (code, signal, onEvent) => {
            const result = await runCode(code, {
              session,
              backend: settings.backend,
              sandbox,
              jupyter,
              noSandbox: noSandboxReason(sandbox ? undefined : provider),
              deadlineMs: config.timeoutMs,
              signal,
              onEvent,
            });
            await files.sync();
            return result;
          },
          pythonVersion: PYTHON_VERSION,
          pythonNetwork,
          // What the server has, told to the model: asked once per server, and not waited for when it cannot say.
          jupyter: jupyter && { label: jupyter.label, modules: await jupyterServer(settings.jupyter)?.modules(scope) },
          signal: controller.signal,
          nextSeq: () => ++seq,
          update: (message, final) => {
            update(message, final);
            if (final && message.cells) saveVariables(id, session.savedState);
          },
          onRetry: (text) => {
            retrying = text !== "";
            setNotice(text);
          },
          onUsage: (used) => {
            usage = { inputTokens: usage.inputTokens + used.inputTokens, outputTokens: usage.outputTokens + used.outputTokens };
          },
        });
      } finally {
        if (retrying) setNotice("");
        if (answering.get(id) === answer) answering.delete(id);
        end();
        setBusy(false);
        // Answered, the conversation keeps this model: a model chosen later elsewhere changes only new conversations.
        onConversationChange(id, (current) => ({
          ...current,
          model: current.model ?? model,
          usage: {
            inputTokens: current.usage.inputTokens + usage.inputTokens,
            outputTokens: current.usage.outputTokens + usage.outputTokens,
          },
          updatedAt: Date.now(),
        }));
      }
    },
    [config, files, id, isHere, modelChoice, onConversationChange, pythonNetwork, scope, session, settings, update],
  );

  const send = useCallback(
    async (text: string) => {
      if (!isHere() || !loaded) return false;
      const message: ChatMessage = {
        id: crypto.randomUUID(),
        conversationId: id,
        seq: (messages[messages.length - 1]?.seq ?? 0) + 1,
        role: "user",
        content: [{ type: "text", text }],
        createdAt: Date.now(),
      };
      // Saved before any request is sent: nothing the person typed is lost.
      try {
        await saveMessage(message);
      } catch (error) {
        setNotice(`Your message could not be saved, so it was not sent (${storageFailure(error)}). Free some space in the browser's storage and send it again.`);
        return false;
      }
      announceSaved(id);
      onConversationChange(id, (current) => ({
        ...current,
        title: current.title === NEW_TITLE ? text.slice(0, 60) : current.title,
        updatedAt: Date.now(),
      }));
      setMessages((current) => [...current, message]);
      setNotice("");
      await turn([...messages, message]);
      return true;
    },
    [id, isHere, loaded, messages, onConversationChange, turn],
  );

  const retry = useCallback(() => turn(messages), [messages, turn]);

  // One Stop: it ends the answer being streamed and, through the run's owner, the Python run, wherever it runs.
  const stop = useCallback(() => answering.get(id)?.controller.abort(), [id]);

  const restart = useCallback(async () => {
    if (answering.has(id) || !isHere()) return;
    setNotice("Restarting Python…");
    // The conversation's kernel on the Jupyter server restarts too, if it has one.
    const kernel = restartJupyterKernel(settings.jupyter, scope);
    await session.restart();
    // The variables saved before are not brought back after a reload.
    saveVariables(id, session.savedState);
    const failed = await kernel;
    setNotice(failed ? `Python restarted, but the Jupyter kernel could not be restarted: ${failed}` : "Python restarted: its variables are gone.");
  }, [id, isHere, scope, session, settings.jupyter]);

  const elsewhere = hold === "elsewhere" || hold === "taking";
  return { session, messages, loaded, busy, notice: unreadable || notice, elsewhere, takeOver, takingOver: hold === "taking", send, retry, stop, restart };
}
