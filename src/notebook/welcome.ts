import { newCell, type Notebook } from "./model";

/** The code a new Playground shows first. */
export const WELCOME_CODE = `# Python in your browser tab: no key, no install.
name = "Kiln"
print(f"Hello from {name}!")
sum(i * i for i in range(10))
`;

const WELCOME_NOTES = `**Shift+Enter** runs a cell and moves to the next; **Ctrl+Enter** (⌘+Enter) runs it in place.
Variables stay between cells, and come back after a reload.`;

/** A new, empty notebook with `cells` (none: one empty code cell). */
export function newNotebook(title: string, cells = [newCell("code")]): Notebook {
  const now = Date.now();
  return { id: crypto.randomUUID(), title, cells, metadata: {}, createdAt: now, updatedAt: now };
}

/** The notebook a new visitor finds: the welcome code first, then how to use it. */
export function welcomeNotebook(): Notebook {
  return newNotebook("Welcome", [newCell("code", WELCOME_CODE), newCell("markdown", WELCOME_NOTES)]);
}
