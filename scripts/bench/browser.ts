// Chromium driven by Playwright for figures and screenshots taken the way a user sees the pages:
// Debian's Chromium (never a downloaded one), headless, no background traffic.
import { chromium, type Browser, type Page } from "@playwright/test";

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

export async function signInBrowser(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Workspaces", exact: true }).waitFor();
}

/** A client-rendered page is ready: its content is shown and nothing says it is still loading. */
export async function pageReady(page: Page): Promise<void> {
  await page.locator("main h1, main .error").first().waitFor();
  await page.waitForFunction(() => {
    const main = (
      globalThis as unknown as {
        document: { querySelector(s: string): { textContent: string | null } | null };
      }
    ).document.querySelector("main");
    return (
      !!main &&
      !/(^|\n)\s*Loading/.test(main.textContent ?? "") &&
      !(main.textContent ?? "").includes("Loading…")
    );
  });
}
