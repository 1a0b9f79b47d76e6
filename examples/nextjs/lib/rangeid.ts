// One generator per authority and namespace, shared by every request of a
// process (or of an isolate, on the edge runtime). It lives on globalThis
// because `next dev` evaluates route and component modules again on every
// edit (HMR): a module-level variable would start a new generator, a new
// incarnation with its own ranges, each time, and leave the old one
// fetching ranges in the background.
import { createGenerator, type Generator, type GeneratorOptions } from "rangeid";

type Generators = Map<string, Promise<Generator>>;
const shared = globalThis as typeof globalThis & { __rangeidGenerators?: Generators };
const generators: Generators = (shared.__rangeidGenerators ??= new Map());

/** The process's generator for `options.url` and `options.namespace`, created on first use. */
export function sharedGenerator(options: GeneratorOptions): Promise<Generator> {
  const key = `${options.url} ${options.namespace}`;
  let generator = generators.get(key);
  if (!generator) {
    generator = createGenerator(options);
    generators.set(key, generator);
    // A failed start (authority down, bad token) is not kept: the next call tries again.
    generator.catch(() => generators.delete(key));
  }
  return generator;
}

/** Exactly `n` IDs: `nextIds` returns up to `n` from one range, so this asks again for the rest. */
export async function takeIds(generator: Generator, n: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < n) ids.push(...(await generator.nextIds(n - ids.length)));
  return ids;
}
