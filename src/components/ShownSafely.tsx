import { Component, type ReactNode } from "react";

/**
 * A part of the page that failed to render (what Python or a model sent, shaped so that a
 * renderer throws) shows this instead, and the rest of the page stays.
 */
export class ShownSafely extends Component<{ what: string; children: ReactNode }, { failed?: string }> {
  state: { failed?: string } = {};

  static getDerivedStateFromError(error: unknown): { failed: string } {
    return { failed: error instanceof Error ? error.message : String(error) };
  }

  render(): ReactNode {
    if (this.state.failed === undefined) return this.props.children;
    return (
      <p className="notice notice-warning" role="note">
        {`This ${this.props.what} could not be shown (${this.state.failed.slice(0, 200)}).`}
      </p>
    );
  }
}
