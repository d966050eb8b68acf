import { cva, type VariantProps } from "class-variance-authority";
import { Slot } from "radix-ui";
import type { ComponentProps } from "react";
import { cn } from "@/lib/utils";

export const buttonVariants = cva(
  "inline-flex items-center justify-center gap-1.5 whitespace-nowrap rounded-[5px] border font-medium " +
    "cursor-pointer no-underline! transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 " +
    "focus-visible:outline-accent disabled:cursor-default disabled:opacity-60 [&_svg]:size-4 [&_svg]:shrink-0",
  {
    variants: {
      variant: {
        default: "border-line bg-panel text-fg hover:bg-hover",
        primary: "border-accent bg-accent text-accent-fg hover:opacity-90",
        destructive: "border-bad bg-panel text-bad hover:bg-bad-bg",
        ghost: "border-transparent bg-transparent text-fg hover:bg-hover",
      },
      size: {
        default: "px-3.5 py-[0.45rem]",
        sm: "px-2.5 py-1 text-[13px]",
        icon: "p-1.5",
      },
    },
    defaultVariants: { variant: "default", size: "default" },
  },
);

export type ButtonProps = ComponentProps<"button"> &
  VariantProps<typeof buttonVariants> & { asChild?: boolean };

/** The one button: `variant` says what it does (primary, destructive …); `asChild` styles a link. */
export function Button({ className, variant, size, asChild, type, ...props }: ButtonProps) {
  const Component = asChild ? Slot.Root : "button";
  return (
    <Component
      // A button inside a form submits only when it says so.
      type={asChild ? undefined : (type ?? "button")}
      className={cn(buttonVariants({ variant, size }), className)}
      {...props}
    />
  );
}
