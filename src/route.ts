/** The app's two pages, chosen by the URL's hash: `#/playground`, or the chat (anything else). */
export type Route = "chat" | "playground";

export function routeFromHash(): Route {
  return location.hash.startsWith("#/playground") ? "playground" : "chat";
}
