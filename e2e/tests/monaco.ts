import { expect, type Page } from "@playwright/test";

// The page's Monaco (the app puts it on `window` for tests), as far as these helpers use it.
type MonacoModel = { uri: { toString(): string }; setValue(value: string): void; getValue(): string };
type MonacoEditor = {
  getModel(): MonacoModel | null;
  getContainerDomNode(): { closest(selector: string): unknown };
};
type MonacoOnPage = {
  monaco: {
    editor: {
      getModels(): MonacoModel[];
      getEditors(): MonacoEditor[];
    };
  };
};

/**
 * Sets the newest Monaco model whose URI starts with `prefix`, through its change events as
 * typing would. It waits for that model's editor to be ready (`data-editor-ready` on its frame):
 * a model exists one render before the editor listens to it, and a value set in between would
 * show in the editor but never reach the page's state.
 */
export async function setModel(page: Page, prefix: string, value: string): Promise<void> {
  await expect
    .poll(
      () =>
        page.evaluate(
          ([p, v]) => {
            if (!("monaco" in globalThis)) return "monaco not loaded";
            const { monaco } = globalThis as unknown as MonacoOnPage;
            const models = monaco.editor.getModels().filter((m) => m.uri.toString().startsWith(p!));
            const model = models[models.length - 1];
            if (!model) return `no model under ${p}`;
            const editor = monaco.editor.getEditors().find((e) => e.getModel() === model);
            if (!editor?.getContainerDomNode().closest('[data-editor-ready="true"]'))
              return "editor not ready";
            model.setValue(v!);
            return "set";
          },
          [prefix, value],
        ),
      { message: `set the Monaco model under ${prefix}` },
    )
    .toBe("set");
}

/** The value of the newest Monaco model whose URI starts with `prefix` ("" if there is none). */
export async function modelValue(page: Page, prefix: string): Promise<string> {
  return page.evaluate((p) => {
    const models = (globalThis as unknown as MonacoOnPage).monaco.editor
      .getModels()
      .filter((m) => m.uri.toString().startsWith(p));
    return models[models.length - 1]?.getValue() ?? "";
  }, prefix);
}
