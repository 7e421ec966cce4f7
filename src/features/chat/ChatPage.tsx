import { useCallback, useEffect, useState } from "react";
import { NEW_TITLE, type Conversation } from "../../model/conversation";
import { deleteConversation, listOrStartConversations, saveConversation } from "../../storage/conversations";
import { disposeSession } from "../../runtime/use-python-session";
import { useSettings } from "../settings/settings-context";
import { ConversationList } from "./ConversationList";
import { ConversationView } from "./ConversationView";
import { stopAnswering } from "./use-conversation";

function newConversation(): Conversation {
  const now = Date.now();
  return { id: crypto.randomUUID(), title: NEW_TITLE, createdAt: now, updatedAt: now, usage: { inputTokens: 0, outputTokens: 0 } };
}

/** Chat: the sidebar of conversations and the open one. */
export function ChatPage({ onOpenSettings }: { onOpenSettings: () => void }) {
  const { settings, loaded } = useSettings();
  const [conversations, setConversations] = useState<Conversation[] | null>(null);
  const [activeId, setActiveId] = useState<string>();

  useEffect(() => {
    void listOrStartConversations(newConversation).then((list) => {
      setConversations(list);
      setActiveId(list[0].id);
    });
  }, []);

  const onNew = useCallback(async () => {
    const created = newConversation();
    await saveConversation(created);
    setConversations((list) => [created, ...(list ?? [])]);
    setActiveId(created.id);
  }, []);

  /** Change one conversation, in the list and in IndexedDB. */
  const onChange = useCallback((id: string, change: (conversation: Conversation) => Conversation) => {
    setConversations((list) =>
      (list ?? []).map((c) => {
        if (c.id !== id) return c;
        const changed = change(c);
        void saveConversation(changed);
        return changed;
      }),
    );
  }, []);

  const active = conversations?.find((c) => c.id === activeId);
  return (
    <main className="chat">
      <ConversationList
        conversations={conversations ?? []}
        activeId={activeId}
        onSelect={setActiveId}
        onNew={() => void onNew()}
        onRename={(conversation, title) => onChange(conversation.id, (current) => ({ ...current, title }))}
        onDelete={(conversation) => {
          // Its answer stops first (no more requests), and what it saves is deleted with the rest.
          void stopAnswering(conversation.id).then(() => {
            disposeSession(`chat:${conversation.id}`);
            return deleteConversation(conversation.id);
          });
          const rest = (conversations ?? []).filter((c) => c.id !== conversation.id);
          setConversations(rest);
          if (conversation.id === activeId) {
            if (rest.length) setActiveId(rest[0].id);
            else void onNew();
          }
        }}
      />
      {active && loaded && (
        <ConversationView
          key={active.id}
          conversation={active}
          settings={settings}
          onChange={onChange}
          onOpenSettings={onOpenSettings}
        />
      )}
    </main>
  );
}
