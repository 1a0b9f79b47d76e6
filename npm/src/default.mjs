// Default entry, for runtimes without a known loader: call
// init(moduleOrBytes) before createGenerator.
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

export const createGenerator = makeCreateGenerator(undefined);
export { init, initSync, Generator, RangeIdError };
