import { useState, type KeyboardEvent } from "react";
import { download, toMarkdown, toNotebook } from "../../chat/export";
import type { Conversation } from "../../chat/types";
import type { Settings } from "../../storage/settings";
import { FilesPanel } from "../files/FilesPanel";
import { fileDropTarget, useSessionFiles } from "../files/use-session-files";
import { MessageList } from "./MessageList";
import { useConversation } from "./use-conversation";

interface Props {
  conversation: Conversation;
  settings: Settings;
  onChange: (id: string, change: (conversation: Conversation) => Conversation) => void;
  onOpenSettings: () => void;
}

export function ConversationView({ conversation, settings, onChange, onOpenSettings }: Props) {
  const { session, messages, busy, notice, send, retry, stop } = useConversation(conversation.id, settings, onChange);
  const { files, state: filesState } = useSessionFiles(`chat:${conversation.id}`, session);
  const [draft, setDraft] = useState("");
  const needsKey = !settings.apiKey;
  const authProblem = messages[messages.length - 1]?.error?.includes("Settings");

  const submit = () => {
    const text = draft.trim();
    if (!text || busy) return;
    setDraft("");
    void send(text);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  };
  const fileBase = conversation.title.replace(/[^\w-]+/g, "-").slice(0, 40) || "conversation";

  return (
    <div className="conversation-with-files" {...fileDropTarget(files)}>
      <section className="conversation" aria-label="Conversation">
        <div className="conversation-bar">
          <h1>{conversation.title}</h1>
          <span className="usage">
            {conversation.usage.inputTokens + conversation.usage.outputTokens} tokens in this conversation
          </span>
          <button type="button" onClick={() => download(`${fileBase}.md`, toMarkdown(conversation, messages), "text/markdown")}>
            Export Markdown
          </button>
          <button type="button" onClick={() => download(`${fileBase}.ipynb`, toNotebook(messages), "application/x-ipynb+json")}>
            Export notebook
          </button>
        </div>
        <MessageList messages={messages} busy={busy} onRetry={() => void retry()} />
        {(needsKey || notice || authProblem) && (
          <p className="chat-notice" role="status">
            {needsKey ? "Add your Anthropic API key in Settings to chat." : notice}
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
            <button type="submit" disabled={!draft.trim()}>
              Send
            </button>
          )}
        </form>
      </section>
      <FilesPanel files={files} state={filesState} />
    </div>
  );
}
