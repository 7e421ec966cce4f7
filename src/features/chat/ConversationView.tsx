import { useEffect, useRef, useState, useSyncExternalStore, type KeyboardEvent, type ReactNode } from "react";
import { download, fileBaseName, toMarkdown, toNotebook } from "../../chat/export";
import { exportCleaner } from "../../components/output-cleaner";
import type { Conversation } from "../../model/conversation";
import { loadSettings, type Settings } from "../../storage/settings";
import { loadDraft, saveDraft } from "../../storage/conversations";
import { keptValue, onRefusedSaves, refusedSaves, saveKept, type RefusedSave } from "../../storage/kept-saves";
import { useOnline } from "../offline/use-online";
import { FilesPanel } from "../files/FilesPanel";
import { useDrawer } from "../../components/drawer";
import { fileDropTarget, useSessionFiles } from "../files/use-session-files";
import { MessageList } from "./MessageList";
import { OpenAsNotebook } from "./OpenAsNotebook";
import { NO_MODEL, useConversation } from "./use-conversation";
import { ModelPicker } from "./ModelPicker";
import { chosenModel, configuredProviders, servedLocally, withModelChosen } from "../../providers";
import { useSettings } from "../settings/settings-context";

function keepDraft(conversationId: string, text: string) {
  void saveKept(`${conversationId}:draft`, "your draft", text, (value) => saveDraft(conversationId, value));
}

/** What a reload would lose of this conversation (and whether of others), while storage refuses it, or "". */
function unsavedNotice(refused: RefusedSave[], conversationId: string): string {
  if (!refused.length) return "";
  const here = refused.filter((save) => save.conversationId === conversationId);
  const counted = new Map<string, number>();
  for (const save of here) counted.set(save.what, (counted.get(save.what) ?? 0) + 1);
  // Answers first: what the person would miss most.
  const parts = [...counted]
    .sort(([a], [b]) => Number(b === "an answer") - Number(a === "an answer"))
    .map(([what, count]) => (count > 1 && what === "an answer" ? `${count} answers` : what));
  const others = new Set(refused.map((save) => save.conversationId).filter((id) => id !== conversationId)).size;
  if (others) parts.push(others === 1 ? "changes to another conversation" : `changes to ${others} other conversations`);
  const listed = parts.length > 1 ? `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}` : parts[0];
  // Why this conversation's last refused write was refused (another's when it has none).
  const latest = here.length ? here : refused;
  const why = latest[latest.length - 1].why;
  const room = why.startsWith("QuotaExceededError") ? "Free some space in the browser's storage: " : "";
  return `Not saved yet, so a reload now would lose ${listed} (${why}). ${room}Kiln keeps trying, and saves each as soon as storage takes it.`;
}

interface Props {
  conversation: Conversation;
  settings: Settings;
  onChange: (id: string, change: (conversation: Conversation) => Conversation) => void;
  onOpenSettings: () => void;
  /** The button that opens the conversation list on a narrow screen. */
  conversationsButton: ReactNode;
}

export function ConversationView({ conversation, settings, onChange, onOpenSettings, conversationsButton }: Props) {
  const filesDrawer = useDrawer("Files", 1100, "end");
  const { save: saveSettings } = useSettings();
  const { session, messages, loaded, busy, notice, elsewhere, takeOver, takingOver, send, retry, stop, restart } = useConversation(
    conversation.id,
    conversation.pythonNetwork === true,
    conversation.model,
    settings,
    onChange,
  );
  const { files, state: filesState } = useSessionFiles(`chat:${conversation.id}`, session);
  const [draft, setDraft] = useState("");
  const [draftLoaded, setDraftLoaded] = useState(false);
  const online = useOnline();
  const notSaved = unsavedNotice(useSyncExternalStore(onRefusedSaves, refusedSaves), conversation.id);
  const needsKey = !configuredProviders(settings).length;
  const model = chosenModel(settings, conversation.model);
  // A local model server answers without a network: only a model on the internet waits for one.
  const reachable = online || servedLocally(settings, model);

  // The draft is kept in IndexedDB as it is typed: a reload, or being offline, loses nothing.
  useEffect(() => {
    let cancelled = false;
    void loadDraft(conversation.id).then((stored) => {
      if (cancelled) return;
      // A draft that storage refused is newer than the one it has.
      const text = keptValue<string>(`${conversation.id}:draft`) ?? stored;
      setDraft((current) => current || text);
      setDraftLoaded(true);
    });
    return () => {
      cancelled = true;
    };
  }, [conversation.id]);
  /** The draft typed since the last save, until it is saved (200 ms after the last keystroke). */
  const unsaved = useRef<string | null>(null);
  useEffect(() => {
    if (!draftLoaded) return;
    unsaved.current = draft;
    const timer = setTimeout(() => {
      unsaved.current = null;
      keepDraft(conversation.id, draft);
    }, 200);
    return () => clearTimeout(timer);
  }, [conversation.id, draft, draftLoaded]);
  // Another conversation opened before that: the draft is saved now.
  useEffect(
    () => () => {
      if (unsaved.current !== null) keepDraft(conversation.id, unsaved.current);
    },
    [conversation.id],
  );
  const authProblem = messages[messages.length - 1]?.error?.includes("Settings");

  const submit = () => {
    const text = draft.trim();
    if (!text || busy || !reachable || elsewhere || !loaded) return;
    setDraft("");
    // Not saved (a full disk): nothing was sent, and the text goes back into the box.
    void send(text).then((sent) => sent || setDraft((current) => current || text));
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  };
  const fileBase = fileBaseName(conversation.title, "conversation");

  return (
    <div className="conversation-with-files" {...fileDropTarget(files)}>
      <section className="conversation" aria-label="Conversation">
        <div className="conversation-bar">
          <div className="conversation-heading">
            {conversationsButton}
            <h1>{conversation.title}</h1>
            {filesDrawer.button}
            <span className="usage">
              {conversation.usage.inputTokens + conversation.usage.outputTokens} tokens in this conversation
            </span>
          </div>
          <div className="conversation-actions">
            <ModelPicker
              settings={settings}
              value={model}
              disabled={busy}
              onChange={(choice) => {
                onChange(conversation.id, (current) => ({ ...current, model: choice }));
                // New conversations start with it, also after a reload.
                void loadSettings()
                  .then((current) => saveSettings(withModelChosen(current, choice)))
                  .catch((error: unknown) => console.error("Could not keep the model chosen for new conversations.", error));
              }}
            />
            <label className="switch">
              <input
                type="checkbox"
                role="switch"
                checked={conversation.pythonNetwork === true}
                onChange={(event) => {
                  const pythonNetwork = event.target.checked;
                  onChange(conversation.id, (current) => ({ ...current, pythonNetwork }));
                }}
              />
              Let Python use the network
            </label>
            <button
              type="button"
              title="A fresh Python for this conversation (and a restart of its Jupyter kernel): every variable is gone"
              disabled={busy || elsewhere || !loaded}
              onClick={() => void restart()}
            >
              Restart
            </button>
            <span className="exports">
              <button type="button" onClick={() => download(`${fileBase}.md`, toMarkdown(conversation, messages, exportCleaner), "text/markdown")}>
                Export Markdown
              </button>
              <button type="button" onClick={() => download(`${fileBase}.ipynb`, toNotebook(conversation, messages, exportCleaner), "application/x-ipynb+json")}>
                Export notebook
              </button>
              <OpenAsNotebook conversation={conversation} messages={messages} />
            </span>
          </div>
        </div>
        <MessageList messages={messages} busy={busy} onRetry={elsewhere ? undefined : () => void retry()} />
        {elsewhere && (
          <p className="chat-notice" role="status">
            {takingOver
              ? "Taking this conversation over: the other tab is stopping its answer and saving it…"
              : "This conversation is open in another tab, which continues it; here it follows what that tab saves."}
            {!takingOver && (
              <button type="button" className="link-button" onClick={takeOver}>
                Use it here
              </button>
            )}
          </p>
        )}
        {notSaved && (
          <p className="chat-notice" role="alert">
            {notSaved}
          </p>
        )}
        {!reachable && (
        <p className="chat-notice offline-notice" role="status">
          You are offline: nothing is sent to the model until you are back online, and your draft is kept. Python, the
          Playground and your files work as usual.
        </p>
      )}
      {reachable && (needsKey || notice || authProblem) && (
          <p className="chat-notice" role="status">
            {needsKey ? NO_MODEL : notice}
            {(needsKey || authProblem) && (
              <button type="button" className="link-button" onClick={onOpenSettings}>
                Enter API key
              </button>
            )}
          </p>
        )}
        <form
          className="composer"
          onSubmit={(event) => {
            event.preventDefault();
            submit();
          }}
        >
          <textarea
            aria-label="Message"
            placeholder="Ask about your data…"
            rows={3}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onKeyDown}
          />
          {busy ? (
            <button type="button" onClick={stop}>
              Stop
            </button>
          ) : (
            <button type="submit" disabled={!draft.trim() || !reachable || elsewhere || !loaded}>
              Send
            </button>
          )}
        </form>
      </section>
      <div {...filesDrawer.panel}>
        <FilesPanel files={files} state={filesState} />
      </div>
      {filesDrawer.backdrop}
    </div>
  );
}
