// How a command ends: a failure with its exit status, and what it prints.
// Every command module uses these; nothing else is shared by all of them.

/** A failure with its exit status: 1 refused, 2 usage, 3 unreachable. */
export class Exit extends Error {
  constructor(status, message, { document } = {}) {
    super(message);
    this.status = status;
    this.document = document;
  }
}
export const usage = (message) => new Exit(2, message);

/** Prints `text` with one final newline. */
export function out(text) {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}
