import type { Locator, Page } from "playwright-core";

/**
 * Follows the main navigation's link to a page and waits for that page's own heading, so
 * nothing is looked for on the page before it (the shell opens on Keys, whose labels
 * overlap: "End user", "Scope").
 */
export async function openFromNav(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { name, exact: true, level: 1 }).waitFor();
}

/** Goes to a dashboard URL (#/devices/dev_…) and waits for its heading. */
export async function visit(page: Page, url: string, heading: string | RegExp): Promise<void> {
  await page.goto(url);
  await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
}

/**
 * Runs `act` (a search, a filter: the page renders anew) and waits until `shown`, the list
 * on the page before it, is gone. What is looked for next is then in the new list, never in
 * the old one, which may show it too. `shown` is waited for first, so the old list is there.
 */
export async function untilReplaced(page: Page, shown: Locator, act: () => Promise<void>): Promise<void> {
  const old = await shown.elementHandle();
  await act();
  await page.waitForFunction((el) => !el?.isConnected, old);
}
