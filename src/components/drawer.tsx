import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from "react";

/**
 * The widths under which a side panel becomes a drawer (docs/layout.md): the conversation list and the
 * Playground's panels on a phone, the chat's files on a tablet too.
 */
export type DrawerWidth = 700 | 1100;

const FOCUSABLE = 'button:not(:disabled), [href], input:not(:disabled), select:not(:disabled), textarea:not(:disabled), [tabindex]:not([tabindex="-1"])';

export interface Drawer {
  open: boolean;
  /** Closes it, and focus goes back to its button. */
  close: () => void;
  /** Its button (shown only under its width): **Conversations**, **Files**, **Notebooks**. */
  button: ReactNode;
  /** Spread on the panel: its class and id (the panel keeps its own names and roles). */
  panel: { id: string; className: string; ref: (element: HTMLElement | null) => void };
  /** The shade behind an open drawer: a tap on it closes the drawer. */
  backdrop: ReactNode;
}

/**
 * A side panel that, under `width`, is hidden behind a button and opens over the page. It closes with
 * Escape, a tap outside, or `close()` (a choice made in it); focus goes into it when it opens and back
 * to its button when it closes. Above `width` the panel is in its place and the button is not shown.
 */
export function useDrawer(name: string, width: DrawerWidth, side: "start" | "end" = "start"): Drawer {
  const [open, setOpen] = useState(false);
  const id = useId();
  const button = useRef<HTMLButtonElement | null>(null);
  const panel = useRef<HTMLElement | null>(null);
  /** Focus goes back to the button once closed (also when a choice in the drawer made the button render anew). */
  const refocus = useRef(false);

  const close = useCallback(() => {
    refocus.current = true;
    setOpen(false);
  }, []);

  useEffect(() => {
    if (!open) {
      if (refocus.current) button.current?.focus();
      refocus.current = false;
      return;
    }
    panel.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    const onKey = (event: KeyboardEvent) => {
      // Escape that something inside already answered (a rename, a question) is left to it.
      if (event.key === "Escape" && !event.defaultPrevented) close();
    };
    document.addEventListener("keydown", onKey);
    // Widened past its width: the panel is in its place again, and nothing is left open.
    const wide = matchMedia(`(min-width: ${width + 0.02}px)`);
    const onWide = () => wide.matches && setOpen(false);
    wide.addEventListener("change", onWide);
    return () => {
      document.removeEventListener("keydown", onKey);
      wide.removeEventListener("change", onWide);
    };
  }, [open, close, width]);

  return {
    open,
    close,
    button: (
      <button
        type="button"
        ref={button}
        className={`drawer-button drawer-under-${width}`}
        aria-expanded={open}
        aria-controls={id}
        onClick={() => (open ? close() : setOpen(true))}
      >
        {name}
      </button>
    ),
    panel: {
      id,
      className: `drawer drawer-under-${width} drawer-${side}${open ? " drawer-open" : ""}`,
      ref: (element) => {
        panel.current = element;
      },
    },
    backdrop: open ? <div className={`drawer-backdrop drawer-under-${width}`} onClick={close} /> : null,
  };
}
