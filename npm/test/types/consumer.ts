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
  region: "weur",
};

// @ts-expect-error: allowInsecureHttp is a boolean.
const badFlag: GeneratorOptions = { ...options, allowInsecureHttp: "yes" };

// @ts-expect-error: region is a string.
const badRegion: GeneratorOptions = { ...options, region: 3 };

export async function take(): Promise<string | undefined> {
  await using ids = await createGenerator({ ...options, signal: AbortSignal.timeout(1000) });
  try {
    const batch: string[] = await ids.nextIds(10, { signal: AbortSignal.timeout(100) });
    await ids.settled({ signal: new AbortController().signal });
    const big: bigint = await ids.nextIdBigInt({});
    return (await ids.nextId({ signal: AbortSignal.timeout(50) })) + batch[0] + big;
  } catch (e) {
    if (!(e instanceof RangeIdError)) throw e;
    switch (e.code) {
      case "exhausted": {
        const left: string = e.remaining;
        const held: string | undefined = e.available;
        return left + held;
      }
      case "invalid_request": {
        const most: number | undefined = e.limit;
        return String(most);
      }
      case "aborted": {
        const why: unknown = e.cause;
        return String(why);
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

export function sync(): void {
  // @ts-expect-error: nextIds takes options, not a signal.
  void createGenerator(options).then((ids) => ids.nextIds(1, AbortSignal.abort()));
  void createGenerator(options).then((ids) => {
    using scoped = ids;
    return scoped.tryNextId();
  });
}
