import { Markdown } from "../../components/Markdown";
import { ShownSafely } from "../../components/ShownSafely";
import type { ChatMessage } from "../../model/conversation";
import { codeOf } from "../../chat/python-tool";
import { modelLabel, providerKind } from "../../providers";
import { PythonCell } from "./PythonCell";

interface Props {
  messages: readonly ChatMessage[];
  busy: boolean;
  /** Absent where this tab does not continue the conversation (another tab does). */
  onRetry?: () => void;
}

/** The conversation: the person's messages, the model's answers with their Python cells. */
export function MessageList({ messages, busy, onRetry }: Props) {
  const cells = new Map(messages.flatMap((m) => m.cells ?? []).map((cell) => [cell.toolUseId, cell]));
  const last = messages[messages.length - 1];
  return (
    <div className="messages" role="log" aria-label="Messages">
      {messages.map((message) => {
        if (message.role === "user") {
          const text = message.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
          return text ? (
            <div key={message.id} className="message message-user">
              {text}
            </div>
          ) : null;
        }
        return (
          <article key={message.id} className={`message message-assistant status-${message.status}`}>
            {message.author && (
              <p className="answer-author">
                {message.author.model ? modelLabel(message.author) : (providerKind(message.author.provider)?.label ?? message.author.provider)}
              </p>
            )}
            {message.content.map((block, index) =>
              block.type === "text" ? (
                <ShownSafely key={index} what="part of the answer" shows={block.text}>
                  <Markdown source={block.text} />
                </ShownSafely>
              ) : block.type === "tool_call" ? (
                <ShownSafely key={block.id} what="Python cell" shows={cells.get(block.id)}>
                  <PythonCell code={codeOf(block.input) ?? ""} cell={cells.get(block.id)} />
                </ShownSafely>
              ) : null,
            )}
            {message.status === "streaming" && !message.content.length && <p className="thinking">Thinking…</p>}
            {message.notice && (
              <p className="notice notice-warning" role="note">
                {message.notice}
              </p>
            )}
            {message.status === "stopped" && <p className="notice notice-warning">Stopped.</p>}
            {message.status === "error" && (
              <div className="notice notice-warning" role="alert">
                {message.error}
                {message === last && !busy && onRetry && (
                  <button type="button" onClick={onRetry}>
                    Retry
                  </button>
                )}
              </div>
            )}
            {message.usage && (
              <p className="usage">
                {message.usage.inputTokens} in · {message.usage.outputTokens} out tokens
              </p>
            )}
          </article>
        );
      })}
    </div>
  );
}
