import { newCell, newNotebook, type Notebook } from "./model";

/** The code a new Playground shows first. */
export const WELCOME_CODE = `# Python in your browser tab: no key, no install.
name = "Kiln"
print(f"Hello from {name}!")
sum(i * i for i in range(10))
`;

const WELCOME_NOTES = `**Shift+Enter** runs a cell and moves to the next; **Ctrl+Enter** (⌘+Enter) runs it in place.
Variables stay between cells, and come back after a reload.`;

/** The notebook a new visitor finds: the welcome code first, then how to use it. */
export function welcomeNotebook(): Notebook {
  return newNotebook("Welcome", [newCell("code", WELCOME_CODE), newCell("markdown", WELCOME_NOTES)]);
}
