"use client";
import { X } from "lucide-react";
import { Dialog as DialogPrimitive } from "radix-ui";
import type { ComponentProps, ReactNode } from "react";
import { cn } from "@/lib/utils";

export const Dialog = DialogPrimitive.Root;
export const DialogTrigger = DialogPrimitive.Trigger;
export const DialogClose = DialogPrimitive.Close;

export const overlayClass = "fixed inset-0 z-40 bg-black/45";
export const contentClass =
  "fixed left-1/2 top-1/2 z-50 w-[min(92vw,520px)] max-h-[85vh] -translate-x-1/2 -translate-y-1/2 overflow-auto " +
  "rounded-lg border border-line bg-panel p-5 text-fg shadow-2xl focus:outline-none";

/** A modal with a title, an optional description and a close button; focus stays inside. */
export function DialogContent({
  title,
  description,
  className,
  children,
  ...props
}: ComponentProps<typeof DialogPrimitive.Content> & { title: ReactNode; description?: ReactNode }) {
  return (
    <DialogPrimitive.Portal>
      <DialogPrimitive.Overlay className={overlayClass} />
      <DialogPrimitive.Content
        className={cn(contentClass, className)}
        {...(description ? {} : { "aria-describedby": undefined })}
        {...props}
      >
        <DialogPrimitive.Title className="m-0 mb-2 text-base font-semibold">{title}</DialogPrimitive.Title>
        {description && (
          <DialogPrimitive.Description className="m-0 mb-4 text-muted">
            {description}
          </DialogPrimitive.Description>
        )}
        {children}
        <DialogPrimitive.Close
          aria-label="Close"
          className="absolute right-3 top-3 rounded border-0 bg-transparent p-1 text-muted hover:bg-hover"
        >
          <X className="size-4" />
        </DialogPrimitive.Close>
      </DialogPrimitive.Content>
    </DialogPrimitive.Portal>
  );
}
