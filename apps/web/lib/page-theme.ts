"use client";
import { useEffect, useState } from "react";

/**
 * The page's theme (data-theme on <html>, set before the first paint and switched by the sidebar
 * toggle without a reload), for components that draw their own colours: Monaco, toasts.
 */
export function usePageTheme(): "light" | "dark" {
  const [theme, setTheme] = useState<"light" | "dark">("light");
  useEffect(() => {
    const root = document.documentElement;
    const read = () => setTheme(root.dataset.theme === "dark" ? "dark" : "light");
    read();
    const observer = new MutationObserver(read);
    observer.observe(root, { attributes: true, attributeFilter: ["data-theme"] });
    return () => observer.disconnect();
  }, []);
  return theme;
}
