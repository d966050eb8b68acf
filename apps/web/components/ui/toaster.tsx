"use client";
import { Toaster as Sonner } from "sonner";
import { usePageTheme } from "@/lib/page-theme";

/**
 * Toasts (sonner): `import { toast } from "sonner"; toast.success("Deployed u/admin/hello")`.
 * Confirmations of saves and deploys; errors stay beside the field or action they concern.
 * The theme follows data-theme on <html>, which the theme toggle changes without a reload.
 */
export function Toaster() {
  const theme = usePageTheme();
  return <Sonner theme={theme} position="bottom-right" closeButton richColors duration={4000} />;
}
