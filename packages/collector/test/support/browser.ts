/**
 * Real headless Chromium (Debian's package, driven by playwright-core) for the browser tests:
 * the check that it is installed, one page with the flags that work on this machine, the page's
 * uncaught errors collected, and screenshots to .artifacts/screenshots (git-ignored, kept by CI).
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { expect } from 'vitest'

export const CHROMIUM = '/usr/bin/chromium'
export const SHOTS = fileURLToPath(new URL('../../../../.artifacts/screenshots', import.meta.url))

/** Throws unless Chromium is installed (the browser tests never skip); makes the screenshot folder. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\`. The browser tests need it and do not skip.`,
    )
  mkdirSync(SHOTS, { recursive: true })
}

export interface BrowserPage {
  browser: Browser
  page: Page
  /** Messages of the page's uncaught errors, in order. */
  pageErrors: string[]
}

/** Launches headless Chromium and opens one 1280×800 page; `defaultTimeout` is the page's action timeout. */
export async function openBrowserPage({
  defaultTimeout = 10_000,
  timezoneId,
}: {
  defaultTimeout?: number
  /** The page's time zone (IANA; default the machine's): the dashboard names it as `tz`. */
  timezoneId?: string
} = {}): Promise<BrowserPage> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, ...(timezoneId ? { timezoneId } : {}) })
  page.setDefaultTimeout(defaultTimeout)
  const pageErrors: string[] = []
  page.on('pageerror', (e) => pageErrors.push(e.message))
  return { browser, page, pageErrors }
}

/** Saves a full-page screenshot as `<name>.png` in the screenshot folder. */
export function screenshot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

/**
 * Goes to a dashboard URL and waits until the view has drawn what its hash names (the router
 * marks `<body data-loaded>` with the hash it loaded). A transcript shown before stays in the page
 * until the new one replaces it, so a click or typing before that would go to the old one.
 */
export async function gotoDrawn(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await expect
    .poll(() => page.evaluate(() => document.body.dataset.loaded === location.hash), { timeout: 10_000, interval: 50 })
    .toBe(true)
}

/**
 * Holds the page's requests that `matches` (a slow network or database) until `release()`; then
 * they go to the server as they were. `stop()` releases them, waits until each has gone on, and
 * removes the hold (removed first, a request still held would be answered twice).
 */
export async function holdRequests(
  page: Page,
  matches: (url: URL) => boolean,
): Promise<{ release: () => void; stop: () => Promise<void> }> {
  let release = () => {}
  const held = new Promise<void>((r) => {
    release = r
  })
  const going = new Set<Promise<void>>()
  await page.route(matches, (route) => {
    const on = held.then(() => route.continue())
    going.add(on)
    return on
  })
  return {
    release,
    stop: async () => {
      release()
      await Promise.all(going)
      await page.unroute(matches)
    },
  }
}
