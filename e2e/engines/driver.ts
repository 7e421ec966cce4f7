/**
 * One small driver interface over two automation layers, so the cross-engine test bodies
 * (everywhere.spec.ts) are written once: puppeteer-core drives Firefox ESR over WebDriver
 * BiDi, selenium-webdriver drives WebKitGTK's MiniBrowser through WebKitWebDriver (classic
 * WebDriver) under Xvfb. Page interaction goes through scripts evaluated in the page, which
 * both run the same way.
 */
import { spawn, type ChildProcess } from "node:child_process";
import puppeteer, { type Browser as PptrBrowser, type Page as PptrPage } from "puppeteer-core";
import { Builder, By, Key, type WebDriver } from "selenium-webdriver";
import { freePort } from "../support/ports";

export type EngineName = "firefox" | "webkit";

export interface EnginePage {
  readonly engine: EngineName;
  goto(url: string): Promise<void>;
  /** Load the page again (going to the URL it is at may only move to its fragment). */
  reload(): Promise<void>;
  /** Evaluate a JavaScript expression in the page (a promise is awaited); returns its JSON value. */
  eval<T = unknown>(expression: string): Promise<T>;
  /** Focus the element `selector` matches, select all it holds (Ctrl+A), and type `text` over it. */
  typeOver(selector: string, text: string): Promise<void>;
  /** Uncaught errors so far: the driver's reports and the page's own recorder. */
  errors(): Promise<string[]>;
  close(): Promise<void>;
}

type Evaluate = <T>(expression: string) => Promise<T>;

/** The parts every engine shares: the page's error recorder after each navigation, and errors(). */
function enginePage(
  engine: EngineName,
  parts: Pick<EnginePage, "typeOver" | "close"> & {
    navigate(url: string): Promise<unknown>;
    refresh(): Promise<unknown>;
    evaluate: Evaluate;
    driverErrors?: string[];
  },
): EnginePage {
  const { navigate, refresh, evaluate, driverErrors = [], typeOver, close } = parts;
  return {
    engine,
    async goto(url) {
      await navigate(url);
      await evaluate(ERROR_RECORDER);
    },
    async reload() {
      await refresh();
      await evaluate(ERROR_RECORDER);
    },
    eval: evaluate,
    typeOver,
    errors: async () => [...driverErrors, ...(await evaluate<string[]>("window.__kilnErrors || []"))],
    close,
  };
}

/** Starts an engine once per test worker and opens fresh pages (fresh profiles) on it. */
export interface Engine {
  readonly name: EngineName;
  newPage(options?: { serviceWorkers?: boolean }): Promise<EnginePage>;
  stop(): Promise<void>;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

/** Records the page's uncaught errors and unhandled rejections in `window.__kilnErrors`. */
const ERROR_RECORDER = `(() => {
  if (window.__kilnErrors) return;
  window.__kilnErrors = [];
  addEventListener("error", (e) => window.__kilnErrors.push("error: " + (e.message || String(e.error))));
  addEventListener("unhandledrejection", (e) => window.__kilnErrors.push("unhandled rejection: " + String(e.reason && e.reason.message || e.reason)));
})()`;

async function firefoxEngine(): Promise<Engine> {
  const browser: PptrBrowser = await puppeteer.launch({ browser: "firefox", executablePath: "/usr/bin/firefox-esr", headless: true });
  return {
    name: "firefox",
    async newPage() {
      const context = await browser.createBrowserContext();
      const page: PptrPage = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(`pageerror: ${error instanceof Error ? error.message : String(error)}`));
      return enginePage("firefox", {
        navigate: (url) => page.goto(url),
        refresh: () => page.reload(),
        evaluate: async <T>(expression: string) => (await page.evaluate(expression)) as T,
        driverErrors: errors,
        async typeOver(selector, text) {
          await page.focus(selector);
          await page.keyboard.down("Control");
          await page.keyboard.press("a");
          await page.keyboard.up("Control");
          await page.keyboard.type(text);
        },
        close: () => context.close(),
      });
    },
    stop: () => browser.close(),
  };
}

const MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

async function webkitEngine(): Promise<Engine> {
  const processes: ChildProcess[] = [];
  // A display of its own per engine: Xvfb picks a free one and writes its number.
  const xvfb = spawn("Xvfb", ["-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"], { stdio: ["ignore", "pipe", "ignore"] });
  processes.push(xvfb);
  const display = await new Promise<string>((resolve, reject) => {
    xvfb.stdout!.once("data", (data: Buffer) => resolve(`:${data.toString().trim()}`));
    xvfb.once("exit", () => reject(new Error("Xvfb did not start")));
  });
  return {
    name: "webkit",
    async newPage() {
      // A WebKitWebDriver per page: it holds one session at a time, and a test may keep a page open beside a shared one.
      const port = await freePort();
      const driver = spawn("WebKitWebDriver", [`--port=${port}`], { stdio: "ignore", env: { ...process.env, DISPLAY: display } });
      processes.push(driver);
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/status`)).ok, 20_000, "WebKitWebDriver");
      const session: WebDriver = await new Builder()
        .usingServer(`http://127.0.0.1:${port}`)
        .withCapabilities({ browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] } })
        .build();
      const run = async <T>(expression: string): Promise<T> => {
        const outcome = (await session.executeAsyncScript(
          `const done = arguments[arguments.length - 1];
           Promise.resolve().then(() => (${expression})).then((value) => done({ value: value === undefined ? null : value }), (error) => done({ error: String(error && error.message || error) }));`,
        )) as { value?: T; error?: string };
        if (outcome.error !== undefined) throw new Error(outcome.error);
        return outcome.value as T;
      };
      // Classic WebDriver has no error events: the page's recorder is all there is.
      return enginePage("webkit", {
        navigate: (url) => session.get(url),
        refresh: () => session.navigate().refresh(),
        evaluate: run,
        async typeOver(selector, text) {
          // WebKitWebDriver's element "send keys" does not reach a contenteditable editor; key actions do.
          await session.findElement(By.css(selector)).click();
          await session.actions().keyDown(Key.CONTROL).sendKeys("a").keyUp(Key.CONTROL).sendKeys(text).perform();
        },
        async close() {
          await session.quit();
          driver.kill();
        },
      });
    },
    async stop() {
      for (const child of processes.reverse()) child.kill();
    },
  };
}

export function startEngine(name: EngineName): Promise<Engine> {
  return { firefox: firefoxEngine, webkit: webkitEngine }[name]();
}
