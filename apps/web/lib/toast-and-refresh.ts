import { toast } from "sonner";

/** A mutation's onSuccess that says what was done (worded from its input), then refreshes the list. */
export function toastAndRefresh<Input>(
  message: (input: Input) => string,
  refresh: () => Promise<unknown>,
): (data: unknown, input: Input) => Promise<void> {
  return async (_data, input) => {
    toast.success(message(input));
    await refresh();
  };
}
