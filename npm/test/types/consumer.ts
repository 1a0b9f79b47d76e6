// Type-checked, never run: the declarations narrow errors on `code` and
// accept every documented option.
import { createGenerator, RangeIdError, type GeneratorOptions } from "rangeid";

const options: GeneratorOptions = {
  url: "http://127.0.0.1:8787",
  token: async ({ refresh }) => (refresh ? "fresh" : "cached"),
  namespace: "orders",
  retryInitialMs: 10,
  retryMaxMs: 100,
  allowInsecureHttp: false,
};

// @ts-expect-error: allowInsecureHttp is a boolean.
const badFlag: GeneratorOptions = { ...options, allowInsecureHttp: "yes" };

export async function take(): Promise<string | undefined> {
  const ids = await createGenerator(options);
  try {
    return await ids.nextId();
  } catch (e) {
    if (!(e instanceof RangeIdError)) throw e;
    switch (e.code) {
      case "exhausted": {
        const left: string | undefined = e.remaining;
        return left;
      }
      case "unavailable": {
        const wait: number | undefined = e.retryAfterMs;
        return String(wait);
      }
      case "refused": {
        const code: string = e.authorityCode;
        const status: number = e.status;
        return `${code} ${status}`;
      }
      default: {
        // @ts-expect-error: only exhausted carries `remaining`.
        const no = e.remaining;
        const retrying: boolean | undefined = e.final === false ? true : undefined;
        const page: string | undefined = e.excerpt;
        const counts: number = ids.stats().blocks + ids.stats().unblocks;
        return `${String(no)} ${retrying} ${page} ${counts}`;
      }
    }
  }
}
