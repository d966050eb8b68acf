// The WebAssembly QuickJS that flow expressions run in, never the host's own JavaScript engine.
// One module is loaded lazily and reused; every evaluation gets a fresh runtime and context, so
// nothing one expression leaves behind is seen by the next.
//
// Memory: this QuickJS build cannot measure allocation sizes (no malloc_usable_size), so its own
// `setMemoryLimit` counts little more than allocations. The real cap is the WebAssembly memory
// itself: the module's linear memory is created with a maximum of its fixed 16 MiB base plus the
// cap. Evaluations are synchronous, so at most one runtime lives in a module at a time and the
// whole allowance is that evaluation's: the cap plus what the base leaves free after the
// module's own data and stack (measured: a string grown by appending reached ~22 MB before
// failing under the 16 MiB default). A module the evaluation left broken (a WebAssembly trap) is
// dropped and the next evaluation loads a fresh one.
import fs from "node:fs";
import { createRequire } from "node:module";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";

// Under NodeNext the package's CommonJS typings describe the default import as the module
// object; at run time the ESM entry's default export is the variant itself.
const variant = releaseSync as unknown as QuickJSSyncVariant;

// The project compiles against ES2023 without the DOM library, which is where TypeScript keeps
// the WebAssembly types; this is the little of it used here.
type WasmModule = object;
type WasmMemory = { readonly buffer: ArrayBuffer };
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => WasmModule;
      Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
    };
  }
).WebAssembly;

const PAGE = 64 * 1024;
/** The module's fixed linear memory (its declared minimum): stack, data and the allocator. */
const BASE_PAGES = 256;

let compiled: WasmModule | null | undefined;
const modules = new Map<number, Promise<QuickJSWASMModule>>();

/**
 * The compiled .wasm, kept so that reloading a module skips compiling it again; null when the
 * file cannot be found from here (a bundled build), in which case the variant loads its own.
 */
function wasmModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      const require = createRequire(import.meta.url);
      const entry = require.resolve("@jitl/quickjs-wasmfile-release-sync");
      const file = entry.replace(/[^/\\]+$/, "emscripten-module.wasm");
      compiled = new wasm.Module(fs.readFileSync(file));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** The QuickJS module whose memory allows `memoryBytes` beyond its base, loaded once. */
export function sandboxModule(memoryBytes: number): Promise<QuickJSWASMModule> {
  const extraPages = Math.max(1, Math.ceil(memoryBytes / PAGE));
  let loading = modules.get(extraPages);
  if (!loading) {
    const memory = new wasm.Memory({ initial: BASE_PAGES, maximum: BASE_PAGES + extraPages });
    const module = wasmModule();
    loading = newQuickJSWASMModuleFromVariant(
      newVariant(
        variant,
        module
          ? { wasmModule: module as never, wasmMemory: memory as never }
          : { wasmMemory: memory as never },
      ),
    );
    loading.catch(() => modules.delete(extraPages));
    modules.set(extraPages, loading);
  }
  return loading;
}

/** Forgets a module that trapped; the next evaluation with that cap loads a new one. */
export function retireSandboxModule(memoryBytes: number): void {
  modules.delete(Math.max(1, Math.ceil(memoryBytes / PAGE)));
}

/**
 * Whether the module's memory has grown to (near) its cap: an exception without a value then
 * means out of memory. Growth comes in chunks, so the last one may not fit under the cap.
 */
export function sandboxMemoryFull(module: QuickJSWASMModule, memoryBytes: number): boolean {
  const extraPages = Math.max(1, Math.ceil(memoryBytes / PAGE));
  return module.getWasmMemory().buffer.byteLength >= (BASE_PAGES + extraPages * 0.75) * PAGE;
}
