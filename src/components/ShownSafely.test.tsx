// @vitest-environment jsdom
import { act } from "react";
import { createRoot } from "react-dom/client";
import { describe, expect, it, vi } from "vitest";
import { ShownSafely } from "./ShownSafely";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

function Part({ text }: { text: string }) {
  if (text.startsWith("bad")) throw new RangeError("Maximum call stack size exceeded");
  return <p>{text}</p>;
}

describe("ShownSafely", () => {
  it("shows why a part could not be shown, keeps its neighbours, and tries again when the part changes", () => {
    const container = document.createElement("div");
    const root = createRoot(container);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const render = (text: string) =>
      act(() =>
        root.render(
          <>
            <ShownSafely what="output" shows={text}>
              <Part text={text} />
            </ShownSafely>
            <p>neighbour</p>
          </>,
        ),
      );
    render("bad");
    expect(container.textContent).toBe("This output could not be shown (Maximum call stack size exceeded).neighbour");
    render("good now");
    expect(container.textContent).toBe("good nowneighbour");
    logged.mockRestore();
    act(() => root.unmount());
  });
});
