import { useId } from "react";

/**
 * The question a Delete asks in place, in the row of what it deletes: **Delete**, or **Cancel**
 * (focused first) or Escape to keep it.
 */
export function ConfirmDelete({
  name,
  question,
  onDelete,
  onKeep,
}: {
  /** What is deleted, as its Delete button names it: the group is "Delete <name>?". */
  name: string;
  question: string;
  onDelete: () => void;
  onKeep: () => void;
}) {
  const questionId = useId();
  return (
    <div
      role="group"
      className="confirm-delete"
      aria-label={`Delete ${name}?`}
      aria-describedby={questionId}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          // Answered here: a drawer holding the question stays open.
          event.preventDefault();
          onKeep();
        }
      }}
    >
      <span id={questionId}>{question}</span>
      <button type="button" className="danger" onClick={onDelete}>
        Delete
      </button>
      <button type="button" autoFocus onClick={onKeep}>
        Cancel
      </button>
    </div>
  );
}
