import { expect, type Frame, type Page } from "@playwright/test";

/** A phone held upright: 390 × 844 CSS pixels, touch. */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } as const;

/** The document of `where` is no wider than its window: nothing scrolls sideways. */
export async function expectNoSidewaysScroll(where: Page | Frame): Promise<void> {
  const { scrollWidth, clientWidth } = await where.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth };
  });
  expect(scrollWidth, `${where.url()} scrolls sideways`).toBeLessThanOrEqual(clientWidth);
}

/**
 * Every visible button, select, input and text box of `where` is at least 40 × 40 px where it is
 * touched (a checkbox in a label is touched anywhere on its label), and lies within the window's
 * width (none cut off at an edge). Returns how many were measured.
 */
export async function expectTouchTargets(where: Page | Frame): Promise<number> {
  const measured = await where.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("button, select, input, textarea")]
      .filter((element) => element.checkVisibility({ visibilityProperty: true }))
      .map((element) => {
        const box = element instanceof HTMLInputElement && ["checkbox", "radio"].includes(element.type) ? (element.closest("label") ?? element) : element;
        const { width, height, left, right } = box.getBoundingClientRect();
        const name = element.getAttribute("aria-label") ?? element.textContent?.trim() ?? element.tagName;
        return { name: `${element.tagName.toLowerCase()} ${name}`, width, height, inside: left >= 0 && right <= document.documentElement.clientWidth };
      }),
  );
  expect(measured.filter(({ width, height }) => width < 40 || height < 40)).toEqual([]);
  expect(measured.filter(({ inside }) => !inside).map(({ name }) => name)).toEqual([]);
  return measured.length;
}
