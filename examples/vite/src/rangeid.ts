// The page's one generator, created on first import and kept across Vite's
// hot updates (HMR): `import.meta.hot.data` survives a module being
// evaluated again in the same page, so editing a module that imports this
// one does not start a second generator (a new incarnation, fetching its
// own ranges while the first keeps fetching too). A full page reload starts
// a new one, which is right: the old page and its generator are gone.
//
// The settings come from VITE_RANGEID_* variables (see README.md). Vite
// writes them into the JavaScript it serves and builds: the token is
// readable by everyone who can load the page.
import { createGenerator, type Generator } from 'rangeid'

function create(): Promise<Generator> {
  const url = import.meta.env.VITE_RANGEID_URL
  const token = import.meta.env.VITE_RANGEID_TOKEN
  const namespace = import.meta.env.VITE_RANGEID_NAMESPACE
  if (!url || !token || !namespace) {
    return Promise.reject(new Error('set VITE_RANGEID_URL, VITE_RANGEID_TOKEN and VITE_RANGEID_NAMESPACE (see README.md)'))
  }
  return createGenerator({ url, token, namespace })
}

export const generator: Promise<Generator> = import.meta.hot?.data.generator ?? create()
if (import.meta.hot) import.meta.hot.data.generator = generator

/** Exactly `n` IDs: `nextIds` returns up to `n` from one range, so this asks again for the rest. */
export async function takeIds(n: number): Promise<string[]> {
  const ids = await generator
  const out: string[] = []
  while (out.length < n) out.push(...(await ids.nextIds(n - out.length)))
  return out
}
