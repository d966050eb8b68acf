"use client";
import { Plus } from "lucide-react";
import { Button } from "@/components/ui/button";
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from "@/components/ui/dropdown-menu";
import { LANGUAGES, STEP_KINDS, type Language, type StepKind } from "./model";

/** "Add step": an inline script in one of the five languages, a script by path, a branch, a loop… */
export function AddStepMenu({
  label = "Add step",
  onAdd,
  disabled,
  testId = "add-step",
  size,
}: {
  label?: string;
  onAdd: (kind: StepKind, language?: Language) => void;
  disabled?: boolean;
  testId?: string;
  size?: "sm" | "default";
}) {
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild disabled={disabled}>
        <Button size={size} data-testid={testId}>
          <Plus aria-hidden /> {label}
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="start">
        {LANGUAGES.map((language) => (
          <DropdownMenuItem key={language} onSelect={() => onAdd("rawscript", language)}>
            Inline script: {language}
          </DropdownMenuItem>
        ))}
        <DropdownMenuSeparator />
        {STEP_KINDS.filter((kind) => kind.kind !== "rawscript").map((kind) => (
          <DropdownMenuItem key={kind.kind} onSelect={() => onAdd(kind.kind)}>
            {kind.label}
          </DropdownMenuItem>
        ))}
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
