import { useId, type ReactNode } from "react";

/**
 * A group of settings (a fieldset named `name`) folded to one line that says what is set; the
 * line is a button that opens the group's fields and folds them again. Folded, the fields stay
 * in the form, so nothing typed in them is lost.
 */
export function FoldedGroup({
  name,
  summary,
  open,
  onToggle,
  children,
}: {
  name: string;
  /** What is set, in a few words ("not set up" when nothing is). */
  summary: string;
  open: boolean;
  onToggle: () => void;
  children: ReactNode;
}) {
  const fieldsId = useId();
  return (
    <fieldset className="folded-group">
      {/* The group's name for assistive technology; the line below shows it. */}
      <legend className="visually-hidden">{name}</legend>
      <button type="button" className="group-toggle" aria-expanded={open} aria-controls={fieldsId} onClick={onToggle}>
        <strong>{name}</strong> · {summary}
        <span className="group-caret" aria-hidden="true">
          {open ? " ▾" : " ▸"}
        </span>
      </button>
      <div id={fieldsId} className="group-fields" hidden={!open}>
        {children}
      </div>
    </fieldset>
  );
}
