import { Component, type ReactNode } from "react";

interface Props {
  what: string;
  /** What is shown: when it changes (the next run's output, more of an answer), it is tried again. */
  shows: unknown;
  children: ReactNode;
}

/**
 * A part of the page that failed to render (what Python or a model sent, shaped so that a
 * renderer throws) shows this instead, and the rest of the page stays.
 */
export class ShownSafely extends Component<Props, { failed?: string }> {
  state: { failed?: string } = {};

  static getDerivedStateFromError(error: unknown): { failed: string } {
    return { failed: error instanceof Error ? error.message : String(error) };
  }

  componentDidUpdate(previous: Props): void {
    if (this.state.failed !== undefined && previous.shows !== this.props.shows) this.setState({ failed: undefined });
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
