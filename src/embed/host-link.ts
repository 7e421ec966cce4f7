import {
  originAllowed,
  parseHostMessage,
  targetOrigins,
  type HostMessage,
  type OriginPolicy,
  type WidgetMessage,
} from "./protocol";

/**
 * The widget's side of the conversation with the page that embeds it. Only the parent
 * window is listened to, and only from an allowed origin; malformed messages are dropped.
 * Replies carry the sender's origin as target, so no other origin can receive them.
 */
export class HostLink {
  /** The origin the parent last wrote from (an allowed one), once known. */
  private parentOrigin: string | undefined;
  private readonly parent: Window | null;

  constructor(
    private readonly policy: OriginPolicy,
    private readonly onMessage: (message: HostMessage, origin: string) => void,
  ) {
    this.parent = window.parent !== window ? window.parent : null;
    // Chromium and Safari tell a frame its parent's origin before any message arrives.
    const ancestor = window.location.ancestorOrigins?.[0];
    if (ancestor && originAllowed(policy, ancestor)) this.parentOrigin = ancestor;
    window.addEventListener("message", this.receive);
  }

  get embedded(): boolean {
    return this.parent !== null;
  }

  /** To the parent, at the origin it last wrote from (else every allowed origin). */
  post(message: WidgetMessage): void {
    this.postTo(message, this.parentOrigin);
  }

  /** A reply to a message from `origin`. */
  reply(message: WidgetMessage, origin: string): void {
    this.postTo(message, origin);
  }

  dispose(): void {
    window.removeEventListener("message", this.receive);
  }

  private postTo(message: WidgetMessage, origin: string | undefined): void {
    if (!this.parent) return;
    for (const target of targetOrigins(this.policy, origin)) {
      try {
        this.parent.postMessage(message, target);
      } catch (error) {
        // A value that cannot be cloned must not take the widget down.
        console.error("Could not post to the host page.", error);
      }
    }
  }

  private readonly receive = (event: MessageEvent): void => {
    if (!this.parent || event.source !== this.parent) return;
    if (!originAllowed(this.policy, event.origin)) return;
    const message = parseHostMessage(event.data);
    if (!message) return;
    if (event.origin !== "null") this.parentOrigin = event.origin;
    this.onMessage(message, event.origin);
  };
}
