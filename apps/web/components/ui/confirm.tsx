"use client";
import { AlertDialog } from "radix-ui";
import { createContext, useCallback, useContext, useRef, useState, type ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { contentClass, overlayClass } from "@/components/ui/dialog";

export type ConfirmOptions = {
  title: string;
  /** What will happen, in a sentence: "Runs already queued are canceled." */
  description?: ReactNode;
  /** The confirming button's label: say the action ("Delete script"), never "OK". */
  action: string;
  /** The other button's label when it does more than cancel ("Keep my code"); Escape picks it too. */
  cancel?: string;
  destructive?: boolean;
};

type Confirm = (options: ConfirmOptions) => Promise<boolean>;
const ConfirmContext = createContext<Confirm | null>(null);

/**
 * `const confirm = useConfirm(); if (await confirm({ title, action, destructive: true })) …`:
 * an accessible modal (Radix AlertDialog) instead of window.confirm, which Playwright and screen
 * readers handle poorly and which cannot say what the action is.
 */
export function useConfirm(): Confirm {
  const confirm = useContext(ConfirmContext);
  if (!confirm) throw new Error("useConfirm needs a <ConfirmProvider> above it");
  return confirm;
}

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [options, setOptions] = useState<ConfirmOptions | null>(null);
  const resolver = useRef<((value: boolean) => void) | null>(null);
  const confirm = useCallback<Confirm>((next) => {
    resolver.current?.(false);
    setOptions(next);
    return new Promise<boolean>((resolve) => {
      resolver.current = resolve;
    });
  }, []);
  const settle = (value: boolean) => {
    resolver.current?.(value);
    resolver.current = null;
    setOptions(null);
  };
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      <AlertDialog.Root open={!!options} onOpenChange={(open) => !open && settle(false)}>
        <AlertDialog.Portal>
          <AlertDialog.Overlay className={overlayClass} />
          <AlertDialog.Content
            className={contentClass}
            data-testid="confirm-dialog"
            {...(options?.description ? {} : { "aria-describedby": undefined })}
          >
            <AlertDialog.Title className="m-0 mb-2 text-base font-semibold">
              {options?.title}
            </AlertDialog.Title>
            {options?.description && (
              <AlertDialog.Description className="m-0 mb-4 text-muted">
                {options.description}
              </AlertDialog.Description>
            )}
            <div className="mt-4 flex justify-end gap-2">
              <AlertDialog.Cancel asChild>
                <Button>{options?.cancel ?? "Cancel"}</Button>
              </AlertDialog.Cancel>
              <AlertDialog.Action asChild>
                <Button
                  variant={options?.destructive ? "destructive" : "primary"}
                  onClick={() => settle(true)}
                >
                  {options?.action}
                </Button>
              </AlertDialog.Action>
            </div>
          </AlertDialog.Content>
        </AlertDialog.Portal>
      </AlertDialog.Root>
    </ConfirmContext.Provider>
  );
}
