"use client";
import { useEffect, useState } from "react";
import { Toaster as Sonner } from "sonner";

/**
 * Toasts (sonner): `import { toast } from "sonner"; toast.success("Deployed u/admin/hello")`.
 * Confirmations of saves and deploys; errors stay beside the field or action they concern.
 * The theme follows data-theme on <html>, which the theme toggle changes without a reload.
 */
export function Toaster() {
  const [theme, setTheme] = useState<"light" | "dark">("light");
  useEffect(() => {
    const read = () => setTheme(document.documentElement.dataset.theme === "dark" ? "dark" : "light");
    read();
    const observer = new MutationObserver(read);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    return () => observer.disconnect();
  }, []);
  return <Sonner theme={theme} position="bottom-right" closeButton richColors duration={4000} />;
}
