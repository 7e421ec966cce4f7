import { useRef, useState } from "react";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import type { Conversation } from "../../model/conversation";
import type { Drawer } from "../../components/drawer";

interface Props {
  conversations: readonly Conversation[];
  activeId: string | undefined;
  onSelect: (id: string) => void;
  onNew: () => void;
  onRename: (conversation: Conversation, title: string) => void;
  onDelete: (conversation: Conversation) => void;
  /** On a narrow screen the list is a drawer. */
  drawer: Drawer;
}

/** The sidebar: New chat, and every conversation to switch to, rename or delete. */
export function ConversationList({ conversations, activeId, onSelect, onNew, onRename, onDelete, drawer }: Props) {
  const [renaming, setRenaming] = useState<string | null>(null);
  const [title, setTitle] = useState("");
  // The conversation whose deletion awaits a second click, asked in its own row.
  const [deleting, setDeleting] = useState<string | null>(null);
  // Where focus goes once the question is answered: the row's Delete button when kept, New chat when deleted.
  const keptFocus = useRef<string | null>(null);
  const newChat = useRef<HTMLButtonElement>(null);
  const keep = (id: string) => {
    keptFocus.current = id;
    setDeleting(null);
  };
  // After a rename with Enter or its cancel with Escape, focus goes back to the row's Rename button
  // (leaving the box, which keeps what was typed, leaves focus where it went).
  const renamedFocus = useRef<string | null>(null);
  // Ended once: the box's blur as it goes (after Enter or Escape) changes nothing.
  const renameOpen = useRef(false);
  const endRename = (conversation: Conversation, save: boolean, refocus = true) => {
    if (!renameOpen.current) return;
    renameOpen.current = false;
    if (save && title.trim() && title.trim() !== conversation.title) onRename(conversation, title.trim());
    if (refocus) renamedFocus.current = conversation.id;
    setRenaming(null);
  };
  return (
    <aside {...drawer.panel} className={`sidebar ${drawer.panel.className}`}>
      <button type="button" className="new-chat" ref={newChat} onClick={onNew}>
        New chat
      </button>
      <ul aria-label="Conversations">
        {conversations.map((conversation) => (
          <li key={conversation.id} className={conversation.id === activeId ? "active" : undefined}>
            {deleting === conversation.id ? (
              <ConfirmDelete
                name={conversation.title}
                question={`Delete “${conversation.title}” and its Python state? This cannot be undone.`}
                onDelete={() => {
                  setDeleting(null);
                  onDelete(conversation);
                  newChat.current?.focus();
                }}
                onKeep={() => keep(conversation.id)}
              />
            ) : renaming === conversation.id ? (
              <form
                onSubmit={(event) => {
                  event.preventDefault();
                  endRename(conversation, true);
                }}
              >
                <input
                  aria-label="Conversation name"
                  autoFocus
                  value={title}
                  onChange={(e) => setTitle(e.target.value)}
                  onKeyDown={(event) => {
                    if (event.key === "Escape") {
                      event.preventDefault();
                      endRename(conversation, false);
                    }
                  }}
                  onBlur={() => endRename(conversation, true, false)}
                />
              </form>
            ) : (
              <>
                <button
                  type="button"
                  className="conversation-title"
                  aria-current={conversation.id === activeId ? "true" : undefined}
                  onClick={() => onSelect(conversation.id)}
                >
                  {conversation.title}
                </button>
                <button
                  type="button"
                  className="icon-button"
                  aria-label={`Rename ${conversation.title}`}
                  ref={(button) => {
                    if (button && renamedFocus.current === conversation.id) {
                      renamedFocus.current = null;
                      button.focus();
                    }
                  }}
                  onClick={() => {
                    renameOpen.current = true;
                    setTitle(conversation.title);
                    setRenaming(conversation.id);
                  }}
                >
                  ✎
                </button>
                <button
                  type="button"
                  className="icon-button"
                  aria-label={`Delete ${conversation.title}`}
                  ref={(button) => {
                    if (button && keptFocus.current === conversation.id) {
                      keptFocus.current = null;
                      button.focus();
                    }
                  }}
                  onClick={() => setDeleting(conversation.id)}
                >
                  ×
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </aside>
  );
}
