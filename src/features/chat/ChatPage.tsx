import { useCallback, useEffect, useRef, useState } from "react";
import { NEW_TITLE, type Conversation } from "../../model/conversation";
import { deleteBegun, deleteConversation, deleteDone, finishBegunDeletes, listOrStartConversations, saveConversation } from "../../storage/conversations";
import { dropKept, saveKept } from "../../storage/kept-saves";
import { disposeSession } from "../../runtime/use-python-session";
import { useSettings } from "../settings/settings-context";
import { shutdownJupyterKernel } from "../../execution/jupyter/server";
import { ConversationList } from "./ConversationList";
import { ConversationView } from "./ConversationView";
import { stopAnswering } from "./use-conversation";
import { useDrawer } from "../../components/drawer";
import { announceDeleted, deleteEverywhere, onAnyNote } from "./conversation-lock";

/** The conversation's record (its name, model and settings), tried again if storage refuses it. */
function saveRecord(conversation: Conversation) {
  void saveKept(`${conversation.id}:record`, "this conversation's name and settings", conversation, saveConversation);
}

function newConversation(): Conversation {
  const now = Date.now();
  return { id: crypto.randomUUID(), title: NEW_TITLE, createdAt: now, updatedAt: now, usage: { inputTokens: 0, outputTokens: 0 } };
}

/** Chat: the sidebar of conversations and the open one. */
export function ChatPage({ onOpenSettings }: { onOpenSettings: () => void }) {
  const { settings, loaded } = useSettings();
  const [conversations, setConversations] = useState<Conversation[] | null>(null);
  const [activeId, setActiveId] = useState<string>();
  const drawer = useDrawer("Conversations", 700);

  /** Conversations another tab deleted since this page started (also while its list was being read). */
  const deletedElsewhere = useRef(new Set<string>());

  // Opened at once (what is typed next goes into it), and saved meanwhile; its first message saves it again with its title.
  const onNew = useCallback(() => {
    const created = newConversation();
    setConversations((list) => [created, ...(list ?? [])]);
    setActiveId(created.id);
    saveRecord(created);
  }, []);

  useEffect(() => {
    // Deletes a closed page began are finished first, and other tabs told.
    void finishBegunDeletes()
      .then((finished) => finished.forEach(announceDeleted))
      .then(() => listOrStartConversations(newConversation))
      .then((read) => {
        const list = read.filter((c) => !deletedElsewhere.current.has(c.id));
        setConversations(list);
        if (list.length) setActiveId(list[0].id);
        else onNew();
      });
  }, [onNew]);

  // Deleted in another tab: gone here too (that tab deletes it, and again once no tab continues it).
  useEffect(
    () =>
      onAnyNote("deleted", (id) => {
        deletedElsewhere.current.add(id);
        dropKept(id);
        disposeSession(`chat:${id}`);
        setConversations((list) => list && list.filter((c) => c.id !== id));
      }),
    [],
  );

  /** Change one conversation, in the list and in IndexedDB. */
  const onChange = useCallback((id: string, change: (conversation: Conversation) => Conversation) => {
    setConversations((list) =>
      (list ?? []).map((c) => {
        if (c.id !== id) return c;
        const changed = change(c);
        saveRecord(changed);
        return changed;
      }),
    );
  }, []);

  // (The first one when the open one was deleted in another tab.)
  const active = conversations?.find((c) => c.id === activeId) ?? conversations?.[0];
  return (
    <main className="chat">
      <ConversationList
        conversations={conversations ?? []}
        activeId={active?.id}
        onSelect={(id) => {
          setActiveId(id);
          drawer.close();
        }}
        onNew={() => {
          onNew();
          drawer.close();
        }}
        drawer={drawer}
        onRename={(conversation, title) => onChange(conversation.id, (current) => ({ ...current, title }))}
        onDelete={(conversation) => {
          // Its answer stops first (no more requests), here and in any other tab, and what it saves is deleted with the rest.
          deleteBegun(conversation.id);
          void deleteEverywhere(conversation.id, async () => {
            await stopAnswering(conversation.id);
            disposeSession(`chat:${conversation.id}`);
            shutdownJupyterKernel(settings.jupyter, `chat:${conversation.id}`);
            await deleteConversation(conversation.id);
          }).then(() => deleteDone(conversation.id));
          const rest = (conversations ?? []).filter((c) => c.id !== conversation.id);
          setConversations(rest);
          if (conversation.id === active?.id) {
            if (rest.length) setActiveId(rest[0].id);
            else onNew();
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
          conversationsButton={drawer.button}
        />
      )}
      {drawer.backdrop}
    </main>
  );
}
