"use client";
import { DropdownMenu as Menu } from "radix-ui";
import type { ComponentProps } from "react";
import { cn } from "@/lib/utils";

export const DropdownMenu = Menu.Root;
export const DropdownMenuTrigger = Menu.Trigger;

export function DropdownMenuContent({ className, ...props }: ComponentProps<typeof Menu.Content>) {
  return (
    <Menu.Portal>
      <Menu.Content
        align="end"
        sideOffset={4}
        className={cn(
          "z-50 min-w-44 rounded-md border border-line bg-panel p-1 text-fg shadow-lg",
          className,
        )}
        {...props}
      />
    </Menu.Portal>
  );
}

export function DropdownMenuItem({
  className,
  destructive,
  ...props
}: ComponentProps<typeof Menu.Item> & { destructive?: boolean }) {
  return (
    <Menu.Item
      className={cn(
        "flex cursor-pointer items-center gap-2 rounded px-2 py-1.5 outline-none select-none",
        "data-[highlighted]:bg-hover data-[disabled]:opacity-50 [&_svg]:size-4",
        destructive && "text-bad",
        className,
      )}
      {...props}
    />
  );
}

export const DropdownMenuSeparator = (props: ComponentProps<typeof Menu.Separator>) => (
  <Menu.Separator className="my-1 h-px bg-line" {...props} />
);
