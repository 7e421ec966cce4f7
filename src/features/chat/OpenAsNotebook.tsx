import { useState } from "react";
import type { ChatMessage, Conversation } from "../../model/conversation";
import { notebookFromConversation } from "../../notebook/from-conversation";
import { storageFailure } from "../../storage/db";
import { addNotebook } from "../../storage/notebooks";
import { notebookHash } from "../playground/share-landing";

/**
 * Open as notebook: the conversation's Python cells with their outputs, and its text, as a new
 * notebook in the Playground, opened there (nothing runs). See docs/notebooks.md.
 */
export function OpenAsNotebook({ conversation, messages }: { conversation: Conversation; messages: readonly ChatMessage[] }) {
  const [problem, setProblem] = useState("");
  const open = async () => {
    const notebook = notebookFromConversation(conversation, messages);
    try {
      await addNotebook(notebook);
    } catch (error) {
      setProblem(`No notebook was made: it could not be kept in the browser's storage (${storageFailure(error)}).`);
      return;
    }
    location.hash = notebookHash(notebook.id);
  };
  return (
    <>
      <button type="button" onClick={() => void open()}>
        Open as notebook
      </button>
      {problem && (
        <span className="notice notice-warning" role="alert">
          {problem}
        </span>
      )}
    </>
  );
}
